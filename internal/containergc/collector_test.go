package containergc

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeRuntime records, for each collection, which of the pods asked about
// it was told to remove.
type fakeRuntime struct{ passes chan map[types.UID]bool }

func (f fakeRuntime) GarbageCollect(_ context.Context, deleted func(types.UID) bool) error {
	f.passes <- map[types.UID]bool{"gone": deleted("gone"), "wanted": deleted("wanted")}
	return nil
}

// Nothing is taken for deleted before every source has delivered its pods;
// then only the pods that are gone are.
func TestCollectWaitsForTheSources(t *testing.T) {
	rt := fakeRuntime{passes: make(chan map[types.UID]bool, 2)}
	ready := false
	c, err := New(Options{Runtime: rt, SourcesReady: func() bool { return ready }, Gone: func(uid types.UID) bool { return uid == "gone" }})
	if err != nil {
		t.Fatal(err)
	}
	c.Collect(context.Background())
	if got := <-rt.passes; got["gone"] || got["wanted"] {
		t.Errorf("before the sources are ready, deleted = %v, want none", got)
	}
	ready = true
	c.Collect(context.Background())
	if got := <-rt.passes; !got["gone"] || got["wanted"] {
		t.Errorf("once ready, deleted = %v, want gone only", got)
	}
}

// Run collects on each tick and returns once ctx ends.
func TestRunCollectsEachInterval(t *testing.T) {
	rt := fakeRuntime{passes: make(chan map[types.UID]bool, 1)}
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := New(Options{Runtime: rt, Interval: time.Minute, SourcesReady: func() bool { return true }, Gone: func(types.UID) bool { return true }, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(time.Minute)
	<-rt.passes
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	if _, err := New(Options{Interval: -time.Second}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New = %v, want ErrInvalidOptions", err)
	}
}
