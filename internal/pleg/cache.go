package pleg

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Cache holds the newest known runtime status of every pod. It is safe for
// concurrent use.
type Cache struct {
	mu   sync.Mutex
	pods map[types.UID]cacheEntry
	// observed is the start of the newest relist: every status in the cache
	// is known to be current as of then.
	observed time.Time
	// changed is closed and replaced on every update, to wake waiters.
	changed chan struct{}
	// onSet, if set, is told of every status stored, outside the lock.
	onSet func(*runtime.PodStatus)
}

type cacheEntry struct {
	status   *runtime.PodStatus
	err      error
	modified time.Time
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{pods: map[types.UID]cacheEntry{}, changed: make(chan struct{})}
}

// Get returns the cached status of a pod. A pod not in the cache is one
// the runtime held nothing of: its status has only the ID.
func (c *Cache) Get(uid types.UID) (*runtime.PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pods[uid]
	if !ok {
		return &runtime.PodStatus{ID: uid}, nil
	}
	return e.status, e.err
}

// GetNewerThan waits until the cache holds a status of the pod that is
// newer than t (set after t, or confirmed by a relist that started after
// t) and returns it, or returns ctx's error.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, t time.Time) (*runtime.PodStatus, error) {
	for {
		c.mu.Lock()
		e, ok := c.pods[uid]
		fresh := c.observed.After(t) || (ok && e.modified.After(t))
		changed := c.changed
		c.mu.Unlock()
		switch {
		case fresh && ok:
			return e.status, e.err
		case fresh:
			return &runtime.PodStatus{ID: uid}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// Set stores a pod's status (or the error fetching it) as observed at
// timestamp. A status older than the stored one is ignored, so that a
// relist that began before a worker's own fetch cannot roll it back.
func (c *Cache) Set(uid types.UID, status *runtime.PodStatus, err error, timestamp time.Time) {
	c.mu.Lock()
	if e, ok := c.pods[uid]; ok && e.modified.After(timestamp) {
		c.mu.Unlock()
		return
	}
	c.pods[uid] = cacheEntry{status: status, err: err, modified: timestamp}
	c.notifyLocked()
	c.mu.Unlock()
	if c.onSet != nil {
		c.onSet(status)
	}
}

// holds reports whether the cache holds a status of the pod, fetched
// without error, that shows exactly the sandboxes and containers (and
// their states) of rec: a status a worker fetched after its own actions,
// which a relist that saw the same need not fetch again.
func (c *Cache) holds(uid types.UID, rec podRecord) bool {
	c.mu.Lock()
	e, ok := c.pods[uid]
	c.mu.Unlock()
	if !ok || e.err != nil || e.status == nil ||
		len(e.status.Sandboxes) != len(rec.sandboxes) || len(e.status.Containers) != len(rec.containers) {
		return false
	}
	for _, sb := range e.status.Sandboxes {
		if st, ok := stateOf(rec.sandboxes, sb.ID); !ok || st != sb.State {
			return false
		}
	}
	for _, ct := range e.status.Containers {
		if st, ok := stateOf(rec.containers, ct.ID); !ok || st != ct.State {
			return false
		}
	}
	return true
}

// Delete forgets a pod, once the agent is done with it.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
}

// UpdateTime records that every cached status is current as of t.
func (c *Cache) UpdateTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.observed) {
		c.observed = t
		c.notifyLocked()
	}
}

func (c *Cache) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}
