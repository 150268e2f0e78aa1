package runtime

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// pullBackoff paces the pulls of an image for a pod after they failed, as
// the kubelet's image back-off does. The pace is client-go's
// flowcontrol.Backoff: each failure makes the next pull wait, first
// initial, then twice as long as the last wait up to max; a failure long
// after the last (twice max) starts over at initial. pullBackoff adds the
// last failure's message, and forgetting a pod's entries at once.
type pullBackoff struct {
	clock   clock.PassiveClock
	backoff *flowcontrol.Backoff

	mu sync.Mutex
	// messages holds why the last pull of each key failed; its keys are
	// those the back-off may know.
	messages map[string]string
}

func newPullBackoff(c clock.Clock, initial, max time.Duration) *pullBackoff {
	b := flowcontrol.NewBackOff(initial, max)
	b.Clock = c
	return &pullBackoff{clock: c, backoff: b, messages: map[string]string{}}
}

func pullBackoffKey(uid types.UID, image string) string { return string(uid) + "_" + image }

// wait reports whether the next pull must still wait, and why the last one
// failed.
func (b *pullBackoff) wait(key string) (bool, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.backoff.IsInBackOffSinceUpdate(key, b.clock.Now()) {
		return false, ""
	}
	return true, b.messages[key]
}

// failed records a failed pull.
func (b *pullBackoff) failed(key, message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backoff.Next(key, b.clock.Now())
	b.messages[key] = message
}

// forget drops the entries of a pod, once it is killed.
func (b *pullBackoff) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prefix := string(uid) + "_"
	for k := range b.messages {
		if strings.HasPrefix(k, prefix) {
			b.backoff.DeleteEntry(k)
			delete(b.messages, k)
		}
	}
}

// prune drops entries past the point where a failure would start over.
func (b *pullBackoff) prune() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backoff.GC()
	for k := range b.messages {
		if b.backoff.Get(k) == 0 {
			delete(b.messages, k)
		}
	}
}
