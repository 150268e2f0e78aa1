package runtime

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// pullBackoff paces the pulls of an image for a pod after they failed,
// as the kubelet's image back-off does: each failure makes the next pull
// wait, first initial, then twice as long as the last wait up to max; a
// failure long after the last (twice max) starts over at initial.
type pullBackoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu      sync.Mutex
	entries map[string]*pullEntry
}

type pullEntry struct {
	delay time.Duration
	// failed is when the last pull failed, and message why.
	failed  time.Time
	message string
}

func newPullBackoff(c clock.PassiveClock, initial, max time.Duration) *pullBackoff {
	return &pullBackoff{clock: c, initial: initial, max: max, entries: map[string]*pullEntry{}}
}

func pullBackoffKey(uid types.UID, image string) string { return string(uid) + "_" + image }

// wait returns how long the next pull must still wait, and why the last
// one failed; 0 if it may go now.
func (b *pullBackoff) wait(key string) (time.Duration, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok {
		return 0, ""
	}
	left := e.failed.Add(e.delay).Sub(b.clock.Now())
	return max(left, 0), e.message
}

// failed records a failed pull.
func (b *pullBackoff) failed(key, message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	e, ok := b.entries[key]
	switch {
	case !ok || now.Sub(e.failed) > 2*b.max:
		e = &pullEntry{delay: b.initial}
		b.entries[key] = e
	default:
		e.delay = min(2*e.delay, b.max)
	}
	e.failed, e.message = now, message
}

// forget drops the entries of a pod, once it is killed.
func (b *pullBackoff) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := string(uid) + "_"
	for k := range b.entries {
		if strings.HasPrefix(k, prefix) {
			delete(b.entries, k)
		}
	}
}

// prune drops entries past the point where a failure would start over.
func (b *pullBackoff) prune() {
	b.mu.Lock()
	defer b.mu.Unlock()
	horizon := b.clock.Now().Add(-2 * b.max)
	for k, e := range b.entries {
		if e.failed.Before(horizon) {
			delete(b.entries, k)
		}
	}
}
