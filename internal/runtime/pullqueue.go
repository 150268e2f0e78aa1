package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/nodeagent/nodeagent/internal/images"
)

// pullQueue runs the image pulls: at most a given number at once (one
// when pulls are serialized, the kubelet's default), and a single pull
// for every container that asks for the same image with the same
// credentials while it runs. A waiter that gives up (its pod's sync
// ended) leaves the pull to the others; the last one to leave cancels it.
// A pull that makes no progress is the runtime's to cancel (containerd's
// image_pull_progress_timeout).
type pullQueue struct {
	// slots bounds the pulls under way; nil: no bound.
	slots chan struct{}

	mu       sync.Mutex
	inflight map[string]*pullCall
}

// pullCall is one pull and those waiting for it.
type pullCall struct {
	done    chan struct{}
	ref     string
	err     error
	waiters int
	cancel  context.CancelFunc
}

// newPullQueue bounds the pulls under way to parallel; 0 for no bound.
func newPullQueue(parallel int) *pullQueue {
	q := &pullQueue{inflight: map[string]*pullCall{}}
	if parallel > 0 {
		q.slots = make(chan struct{}, parallel)
	}
	return q
}

// pullKey tells pulls apart by image and credentials: a pod never gets an
// image through a pull made with credentials it does not hold.
func pullKey(image string, auths []images.AuthConfig) string {
	h := sha256.New()
	for _, a := range auths {
		h.Write([]byte(a.Username))
		h.Write([]byte{0})
		h.Write([]byte(a.Password))
		h.Write([]byte{0})
	}
	return image + "\x00" + hex.EncodeToString(h.Sum(nil))
}

// pull joins the pull of key under way, or starts one with fn, and waits
// for its image reference until ctx ends.
func (q *pullQueue) pull(ctx context.Context, key string, fn func(context.Context) (string, error)) (string, error) {
	q.mu.Lock()
	c, ok := q.inflight[key]
	if !ok {
		// The pull is no one waiter's: it outlives the one that started
		// it, as long as another waits.
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &pullCall{done: make(chan struct{}), cancel: cancel}
		q.inflight[key] = c
		go q.run(pctx, key, c, fn)
	}
	c.waiters++
	q.mu.Unlock()
	select {
	case <-c.done:
		return c.ref, c.err
	case <-ctx.Done():
		q.mu.Lock()
		if c.waiters--; c.waiters == 0 {
			// No one wants it any more: a later ask starts afresh.
			c.cancel()
			if q.inflight[key] == c {
				delete(q.inflight, key)
			}
		}
		q.mu.Unlock()
		return "", ctx.Err()
	}
}

func (q *pullQueue) run(ctx context.Context, key string, c *pullCall, fn func(context.Context) (string, error)) {
	defer c.cancel()
	if q.slots != nil {
		select {
		case q.slots <- struct{}{}:
			defer func() { <-q.slots }()
		case <-ctx.Done():
			q.finish(key, c, "", ctx.Err())
			return
		}
	}
	ref, err := fn(ctx)
	q.finish(key, c, ref, err)
}

func (q *pullQueue) finish(key string, c *pullCall, ref string, err error) {
	q.mu.Lock()
	if q.inflight[key] == c {
		delete(q.inflight, key)
	}
	q.mu.Unlock()
	c.ref, c.err = ref, err
	close(c.done)
}
