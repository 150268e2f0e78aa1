package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

// The first part to fail ends the others, and its error, with its name,
// is Run's.
func TestPartsFirstFailureEndsTheOthers(t *testing.T) {
	boom := errors.New("boom")
	p := parts{
		{"waits", func(ctx context.Context) error { <-ctx.Done(); return nil }},
		{"fails", func(context.Context) error { return boom }},
	}
	err := p.run(context.Background(), time.Minute, funcr.New(func(string, string) {}, funcr.Options{}))
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "fails: ") {
		t.Errorf("run = %v, want the failing part's error with its name", err)
	}
}

// A part that does not return once the agent stops is named in the log
// and left behind after the grace period: the stop is bounded.
func TestPartsStopIsBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	p := parts{
		{"prompt", func(ctx context.Context) error { <-ctx.Done(); return nil }},
		{"stuck", func(context.Context) error { <-release; return nil }},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := p.run(ctx, 100*time.Millisecond, log); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %v with a grace of 100ms", took)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], `"parts"=["stuck"]`) || !strings.Contains(logged[0], "TestPartsStopIsBounded") {
		t.Errorf("logged %q, want the stuck part named, and where it waits", logged)
	}
}
