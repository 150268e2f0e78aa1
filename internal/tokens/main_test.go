package tokens

import (
	"testing"

	"go.uber.org/goleak"
)

// A shared request runs in a goroutine of its own: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
