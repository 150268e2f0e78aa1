package objectcache

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: a watching manager's watches
// end with the context given to Run, and Run returns only after they have.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
