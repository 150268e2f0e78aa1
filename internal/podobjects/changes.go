package podobjects

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/objectcache"
)

// Changes is the Listener that queues what Run tells, for the agent's sync
// loop, which syncs the pods that use what changed: it waits on Signal and
// takes everything pending at once (Take). Telling it never blocks.
type Changes struct {
	mu      sync.Mutex
	pending []Change
	signal  chan struct{}
}

var _ Listener = (*Changes)(nil)

// Change names a ConfigMap or a Secret, or every object of one pod.
type Change struct {
	secret          bool
	namespace, name string
	uid             types.UID
}

// NewChanges returns an empty queue.
func NewChanges() *Changes { return &Changes{signal: make(chan struct{}, 1)} }

// ObjectChanged queues a change of a ConfigMap (secret false) or Secret.
func (c *Changes) ObjectChanged(secret bool, namespace, name string) {
	c.add(Change{secret: secret, namespace: namespace, name: name})
}

// ObjectsReady queues the pod whose objects may be read now.
func (c *Changes) ObjectsReady(uid types.UID) { c.add(Change{uid: uid}) }

func (c *Changes) add(ch Change) {
	c.mu.Lock()
	if !slices.Contains(c.pending, ch) {
		c.pending = append(c.pending, ch)
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// Signal receives once changes are pending; signals that come before
// Take are one.
func (c *Changes) Signal() <-chan struct{} { return c.signal }

// Take returns the pending changes and forgets them.
func (c *Changes) Take() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.pending
	c.pending = nil
	return out
}

// Affects reports whether the change concerns the pod: its own objects,
// or a ConfigMap or Secret it references.
func (ch Change) Affects(pod *corev1.Pod) bool {
	if ch.uid != "" {
		return pod.UID == ch.uid
	}
	if pod.Namespace != ch.namespace {
		return false
	}
	if ch.secret {
		return slices.Contains(objectcache.SecretNames(pod), ch.name)
	}
	return slices.Contains(objectcache.ConfigMapNames(pod), ch.name)
}
