package runtime

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// TestBackoff follows one container through a crash loop: each step is a
// crash (the instance ran from started to finished, relative to the
// clock), then a check at the clock's time.
func TestBackoff(t *testing.T) {
	type step struct {
		at        time.Duration // the clock, since t0
		ranFor    time.Duration // how long the crashed instance ran
		crashedAt time.Duration // when it finished, since t0
		wantLeft  time.Duration
		wantDelay time.Duration
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{{
		name: "first crash restarts at once, then 10s, 20s, 40s",
		steps: []step{
			{at: 0, ranFor: time.Second, crashedAt: 0, wantLeft: 0},
			{at: 2 * time.Second, ranFor: time.Second, crashedAt: 1 * time.Second, wantLeft: 9 * time.Second, wantDelay: 10 * time.Second},
			{at: 11 * time.Second, ranFor: time.Second, crashedAt: 1 * time.Second, wantLeft: 0},
			{at: 13 * time.Second, ranFor: time.Second, crashedAt: 12 * time.Second, wantLeft: 19 * time.Second, wantDelay: 20 * time.Second},
			{at: 32 * time.Second, ranFor: time.Second, crashedAt: 12 * time.Second, wantLeft: 0},
			{at: 33 * time.Second, ranFor: time.Second, crashedAt: 33 * time.Second, wantLeft: 40 * time.Second, wantDelay: 40 * time.Second},
		},
	}, {
		name: "a crash already let through may be retried at once (a failed start)",
		steps: []step{
			{at: 0, ranFor: time.Second, crashedAt: 0, wantLeft: 0},
			{at: time.Second, ranFor: time.Second, crashedAt: 0, wantLeft: 0},
		},
	}, {
		name: "the delay stops doubling at the maximum",
		steps: func() []step {
			var s []step
			at := time.Duration(0)
			delay := time.Duration(0)
			for i := 0; i < 9; i++ {
				s = append(s, step{at: at, ranFor: time.Second, crashedAt: at, wantLeft: delay, wantDelay: delay})
				if delay > 0 {
					s = append(s, step{at: at + delay, ranFor: time.Second, crashedAt: at, wantLeft: 0})
					at += delay
				}
				at += time.Second // the restarted instance runs a second
				delay = min(max(2*delay, 10*time.Second), 5*time.Minute)
			}
			if delay != 5*time.Minute {
				panic("the steps do not reach the maximum")
			}
			return s
		}(),
	}, {
		name: "a container that ran 10 minutes starts the back-off over",
		steps: []step{
			{at: 0, ranFor: time.Second, crashedAt: 0, wantLeft: 0},
			{at: time.Second, ranFor: time.Second, crashedAt: time.Second, wantLeft: 10 * time.Second, wantDelay: 10 * time.Second},
			{at: 11 * time.Second, ranFor: time.Second, crashedAt: time.Second, wantLeft: 0},
			{at: 20 * time.Minute, ranFor: 10 * time.Minute, crashedAt: 20 * time.Minute, wantLeft: 0},
			{at: 20*time.Minute + time.Second, ranFor: time.Second, crashedAt: 20*time.Minute + time.Second, wantLeft: 10 * time.Second, wantDelay: 10 * time.Second},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(t0)
			b := newBackoff(clk, 10*time.Second, 5*time.Minute, 10*time.Minute)
			for i, s := range tc.steps {
				clk.SetTime(t0.Add(s.at))
				finished := t0.Add(s.crashedAt)
				left, delay := b.wait("k", finished.Add(-s.ranFor), finished)
				if left != s.wantLeft || delay != s.wantDelay {
					t.Fatalf("step %d (clock +%s, crash at +%s): wait = %s (delay %s), want %s (delay %s)",
						i, s.at, s.crashedAt, left, delay, s.wantLeft, s.wantDelay)
				}
			}
		})
	}
}

func TestBackoffKeysAreIndependent(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	b := newBackoff(clk, 10*time.Second, 5*time.Minute, 10*time.Minute)
	b.wait(backoffKey("u1", "app", "h1"), t0, t0)
	clk.SetTime(t0.Add(2 * time.Second))
	if left, _ := b.wait(backoffKey("u1", "app", "h1"), t0, t0.Add(time.Second)); left == 0 {
		t.Fatal("second crash of the same key is not delayed")
	}
	// A new spec hash, another container, another pod: each starts afresh.
	for _, key := range []string{backoffKey("u1", "app", "h2"), backoffKey("u1", "other", "h1"), backoffKey("u2", "app", "h1")} {
		if left, _ := b.wait(key, t0, t0.Add(time.Second)); left != 0 {
			t.Errorf("%s: first crash delayed by %s", key, left)
		}
	}
	b.forget("u1")
	if left, _ := b.wait(backoffKey("u1", "app", "h1"), t0, t0.Add(time.Second)); left != 0 {
		t.Errorf("after forget: first crash delayed by %s", left)
	}
	clk.SetTime(t0.Add(time.Hour))
	b.prune()
	if n := len(b.entries); n != 0 {
		t.Errorf("%d entries left after an hour's prune, want 0", n)
	}
}
