package runtime

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the package starts (parallel stops, gRPC connections)
// must have ended when its call or Close returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
