package agent

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// deadlines holds when each running pod's spec.activeDeadlineSeconds
// passes, so that the sync loop syncs it then (and the sync fails it)
// rather than at its next periodic resync, up to a minute late. The syncer
// sets a pod's deadline at each SyncPod, from the spec it was given: a
// deadline lowered in the apiserver reaches it with the update. The loop
// takes the pods that are due each time it polls the workers' queue.
type deadlines struct {
	mu sync.Mutex
	at map[types.UID]time.Time
}

func newDeadlines() *deadlines { return &deadlines{at: map[types.UID]time.Time{}} }

// set records the pod's deadline, replacing any earlier one.
func (d *deadlines) set(uid types.UID, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at[uid] = at
}

func (d *deadlines) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, uid)
}

// due removes and returns the pods whose deadline is not after now.
func (d *deadlines) due(now time.Time) []types.UID {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []types.UID
	for uid, at := range d.at {
		if !at.After(now) {
			out = append(out, uid)
			delete(d.at, uid)
		}
	}
	return out
}
