package agent

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// evictions holds the pods the node evicts, with why in the kubelet's
// words, until their workers forget them: every status the syncer stores
// for such a pod says Failed, Evicted, and the worker stops what runs. A
// nil one holds none.
type evictions struct {
	mu  sync.Mutex
	why map[types.UID]string
}

func newEvictions() *evictions { return &evictions{why: map[types.UID]string{}} }

// evict records why the pod is evicted, and reports whether that is news
// (the first reason stays).
func (e *evictions) evict(uid types.UID, why string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.why[uid]; ok {
		return false
	}
	e.why[uid] = why
	return true
}

// reason is why the pod is evicted, or "".
func (e *evictions) reason(uid types.UID) string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.why[uid]
}

func (e *evictions) forget(uid types.UID) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.why, uid)
}
