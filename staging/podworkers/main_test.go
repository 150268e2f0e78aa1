package podworkers

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: each PodWorkers is stopped and
// waited for, and a worker goroutine ends with its pod.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
