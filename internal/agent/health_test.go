package agent

import (
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// The sync loop counts as stuck once it went without beginning an
// iteration for twice the resync interval, at least 5 minutes, as the
// kubelet's syncloop health check; before its first iteration it is not.
func TestSyncLoopHealth(t *testing.T) {
	for sync, want := range map[time.Duration]time.Duration{
		0: 5 * time.Minute, time.Minute: 5 * time.Minute, 10 * time.Minute: 20 * time.Minute,
	} {
		if got := syncLoopThreshold(sync); got != want {
			t.Errorf("threshold for a resync every %v: %v, want %v", sync, got, want)
		}
	}
	clock := testingclock.NewFakeClock(time.Unix(1700000000, 0))
	a := &Agent{loop: &syncLoop{clock: clock, stall: 5 * time.Minute}}
	if err := a.SyncLoopHealthy(); err != nil {
		t.Errorf("before the first iteration: %v", err)
	}
	a.loop.entered.Store(clock.Now().UnixNano())
	clock.Step(5 * time.Minute)
	if err := a.SyncLoopHealthy(); err != nil {
		t.Errorf("at the threshold: %v", err)
	}
	clock.Step(time.Second)
	err := a.SyncLoopHealthy()
	if err == nil || !strings.Contains(err.Error(), "last began an iteration 5m1s ago; threshold is 5m0s") {
		t.Errorf("past the threshold: %v", err)
	}
	a.loop.entered.Store(clock.Now().UnixNano())
	if err := a.SyncLoopHealthy(); err != nil {
		t.Errorf("after a new iteration: %v", err)
	}
}

// A running loop marks each iteration, so a live agent is healthy.
func TestRunningSyncLoopMarksItsIterations(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	e.eventually("the loop began an iteration", func() bool { return e.agent.loop.entered.Load() != 0 })
	if err := e.agent.SyncLoopHealthy(); err != nil {
		t.Error(err)
	}
}
