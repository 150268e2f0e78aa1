package imagegc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond for up to 5 seconds of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fakeRuntime) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

// run starts Run and returns a function that stops it and waits for it.
func (f *fixture) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.m.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("Run: %v", err)
		}
	}
}

// tick waits for Run to wait on its ticker, then moves the clock a period
// on and waits for the pass.
func (f *fixture) tick(passes int) {
	f.t.Helper()
	waitFor(f.t, "Run to wait for its ticker", f.clock.HasWaiters)
	f.clock.Step(f.m.opts.Period)
	waitFor(f.t, "the pass", func() bool { return f.rt.listCount() >= passes })
}

// Run passes at once and every period; a failure is logged, a second one
// in a row is an ImageGCFailed event on the Node, as with the kubelet.
func TestRunReportsRepeatedFailures(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100})
	rt.failList = errors.New("runtime unavailable")
	f := newFixture(t, rt, nil)
	stop := f.run()
	defer stop()
	waitFor(t, "the first pass", func() bool { return rt.listCount() == 1 })
	if evs := f.events(); len(evs) != 0 {
		t.Errorf("events after one failure: %q, want none", evs)
	}
	f.tick(2)
	waitFor(t, "the ImageGCFailed event", func() bool { return len(f.rec.Events) > 0 })
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning ImageGCFailed runtime unavailable") {
		t.Errorf("events after two failures: %q, want one ImageGCFailed", evs)
	}
	rt.mu.Lock()
	rt.failList = nil
	rt.mu.Unlock()
	f.tick(3)
	f.tick(4)
	if evs := f.events(); len(evs) != 0 {
		t.Errorf("events after successes: %q, want none", evs)
	}
}

func TestRunWithGCOffOnlyWaits(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100})
	rt.setOther(1000)
	f := newFixture(t, rt, func(o *Options) { o.HighThresholdPercent = 100 })
	stop := f.run()
	time.Sleep(10 * time.Millisecond)
	f.clock.Step(time.Hour)
	stop()
	if n := rt.listCount(); n != 0 {
		t.Errorf("listed the images %d times with image GC off", n)
	}
}

func TestNewRefusesAnInvalidPolicy(t *testing.T) {
	_, err := New(Options{Runtime: newFakeRuntime(1, nil), HighThresholdPercent: 80, LowThresholdPercent: 85})
	if err == nil || !strings.Contains(err.Error(), "LowThresholdPercent 85 must be less than HighThresholdPercent 80") {
		t.Errorf("New: %v", err)
	}
}

func TestStatfs(t *testing.T) {
	st, err := statfs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Capacity == 0 || st.Available > st.Capacity {
		t.Errorf("statfs = %+v", st)
	}
	if _, err := statfs("/does/not/exist"); err == nil {
		t.Error("statfs of a missing path: no error")
	}
}
