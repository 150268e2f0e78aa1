package agent

import (
	"cmp"
	"fmt"
	"time"

	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// minSyncLoopStall is the least time the sync loop may go without an
// iteration before it counts as stuck, as the kubelet's: twice the resync
// interval, and at least this.
const minSyncLoopStall = 5 * time.Minute

// syncLoopThreshold is how long the loop may go without an iteration for
// a resync interval of sync (0: the pod workers' default).
func syncLoopThreshold(sync time.Duration) time.Duration {
	return max(2*cmp.Or(sync, podworkers.DefaultResyncInterval), minSyncLoopStall)
}

// SyncLoopHealthy reports an error when the sync loop has run, and has
// not begun an iteration within its threshold since: it is stuck in one
// (a runtime call that does not return, say). The loop wakes at least
// every housekeeping interval, so a healthy loop is never near it.
func (a *Agent) SyncLoopHealthy() error {
	last := a.loop.entered.Load()
	if last == 0 {
		return nil // not started yet
	}
	since := a.loop.clock.Since(time.Unix(0, last))
	if since > a.loop.stall {
		return fmt.Errorf("the sync loop last began an iteration %v ago; threshold is %v", since.Round(time.Second), a.loop.stall)
	}
	return nil
}

// PLEGHealthy reports an error when no relist of the runtime succeeded
// within the PLEG's threshold (3 min).
func (a *Agent) PLEGHealthy() error { return a.pleg.Healthy() }
