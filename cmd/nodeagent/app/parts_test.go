package app

import (
	"context"
	"errors"
	"runtime"
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

// The last parts' ctx ends once the others have returned: the
// checkpoint's writer sees what they changed on their way out.
func TestPartsLastOutliveTheOthers(t *testing.T) {
	proceed, otherDone := make(chan struct{}), make(chan struct{})
	var sawOtherDone bool
	p := parts{
		{"other", func(ctx context.Context) error {
			<-ctx.Done()
			<-proceed
			close(otherDone)
			return nil
		}},
	}
	writer := part{"writer", func(ctx context.Context) error {
		<-ctx.Done()
		select {
		case <-otherDone:
			sawOtherDone = true
		default:
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	go func() {
		// The other part returns only after the writer had its chance to
		// see ctx end too early.
		runtimeGosched(100)
		close(proceed)
	}()
	if err := p.run(ctx, time.Minute, funcr.New(func(string, string) {}, funcr.Options{}), writer); err != nil {
		t.Fatal(err)
	}
	if !sawOtherDone {
		t.Error("the last part's ctx ended before the other part returned")
	}
}

// A last part that fails ends the others, and its error is run's.
func TestPartsLastFailureEndsTheOthers(t *testing.T) {
	boom := errors.New("boom")
	p := parts{{"waits", func(ctx context.Context) error { <-ctx.Done(); return nil }}}
	err := p.run(context.Background(), time.Minute, funcr.New(func(string, string) {}, funcr.Options{}),
		part{"writer", func(context.Context) error { return boom }})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "writer: ") {
		t.Errorf("run = %v, want the writer's error with its name", err)
	}
}

func runtimeGosched(n int) {
	for range n {
		runtime.Gosched()
	}
}
