package runtime

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// backoff is the crash-loop back-off of restarting containers. Each key (pod
// UID, container name, spec hash: a new spec starts afresh) remembers the
// delay that applies to its next crash and the crash it last let through.
//
// The first crash restarts at once; each later one waits the delay, which
// then doubles from initial up to max. A container that ran for resetAfter
// or longer before exiting starts the sequence over. That reset, by how
// long the crashed instance ran, and the free first restart are why this
// is not flowcontrol.Backoff (see pullBackoff), which starts over only
// after a quiet of twice max.
type backoff struct {
	clock      clock.PassiveClock
	initial    time.Duration
	max        time.Duration
	resetAfter time.Duration

	mu      sync.Mutex
	entries map[string]*backoffEntry
}

type backoffEntry struct {
	delay time.Duration
	// allowed is the finish time of the crash last let through.
	allowed time.Time
}

func newBackoff(c clock.PassiveClock, initial, max, resetAfter time.Duration) *backoff {
	return &backoff{clock: c, initial: initial, max: max, resetAfter: resetAfter, entries: map[string]*backoffEntry{}}
}

func backoffKey(uid types.UID, container, hash string) string {
	return string(uid) + "/" + container + "/" + hash
}

// wait decides whether the container instance that ran from started to
// finished may be replaced now. It returns 0 if so (and records that it
// was), else how long is left and the delay that applies.
func (b *backoff) wait(key string, started, finished time.Time) (left, delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	switch {
	case !ok, !started.IsZero() && finished.Sub(started) >= b.resetAfter:
		b.entries[key] = &backoffEntry{delay: b.initial, allowed: finished}
		return 0, 0
	case finished.Equal(e.allowed):
		// Let through before; the restart did not happen (a failed create
		// or start), so it may be retried at once.
		return 0, 0
	}
	until := finished.Add(e.delay)
	if now := b.clock.Now(); now.Before(until) {
		return until.Sub(now), e.delay
	}
	e.allowed = finished
	e.delay = min(2*e.delay, b.max)
	return 0, 0
}

// forget drops the entries of a pod, once it is killed.
func (b *backoff) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := string(uid) + "/"
	for k := range b.entries {
		if strings.HasPrefix(k, prefix) {
			delete(b.entries, k)
		}
	}
}

// prune drops entries idle so long that no crash they know of can still be
// waiting: the container restarted within max of the crash let through,
// then either ran resetAfter (a reset) or crashed and waited at most max.
func (b *backoff) prune() {
	b.mu.Lock()
	defer b.mu.Unlock()
	horizon := b.clock.Now().Add(-(b.resetAfter + 2*b.max))
	for k, e := range b.entries {
		if e.allowed.Before(horizon) {
			delete(b.entries, k)
		}
	}
}
