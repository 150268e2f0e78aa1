package httplimitstest

import (
	"context"
	"testing"
)

// Run runs a server's Run in the background until the test ends, and fails
// the test if it returns an error.
func Run(t *testing.T, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}
