package pleg

import (
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Run's loop and the waiters of GetNewerThan end with their contexts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func typesUID(s string) types.UID { return types.UID(s) }

// The runtime package's Runtime is what the agent hands the PLEG.
var _ Runtime = (*runtime.Runtime)(nil)
