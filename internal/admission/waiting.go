package admission

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Waiting holds the pods bound to this node through the apiserver that
// came before the Node was known: they are admitted (AdmitAPIPod) once it
// is, the oldest first, as the kubelet admits pods in their creation
// order. Until then none of them runs, and none is taken for an orphan.
//
// The Node is told once connected mode runs (Connected) and may be asked
// from any goroutine; the pods are its caller's, one goroutine's (the
// agent's sync loop).
type Waiting struct {
	node atomic.Pointer[NodeGetter]
	pods map[types.UID]*corev1.Pod
}

// NodeGetter gets the Node; mirror.NodeGetter is one.
type NodeGetter interface {
	Node(context.Context) (*corev1.Node, error)
}

// NewWaiting returns an empty Waiting that knows no Node.
func NewWaiting() *Waiting { return &Waiting{pods: map[types.UID]*corev1.Pod{}} }

// Connected tells where the Node is got from now on.
func (w *Waiting) Connected(node NodeGetter) { w.node.Store(&node) }

// Node is the Node, once connected and it is known; else nil.
func (w *Waiting) Node() *corev1.Node {
	if get := w.node.Load(); get != nil {
		node, _ := (*get).Node(context.Background())
		return node
	}
	return nil
}

// Hold keeps the pod until the Node is known; it reports whether the pod
// was not held already.
func (w *Waiting) Hold(pod *corev1.Pod) (first bool) {
	_, held := w.pods[pod.UID]
	w.pods[pod.UID] = pod
	return !held
}

// Update keeps the newest version of a held pod.
func (w *Waiting) Update(pod *corev1.Pod) {
	if _, ok := w.pods[pod.UID]; ok {
		w.pods[pod.UID] = pod
	}
}

// IsHeld reports whether the pod waits for the Node.
func (w *Waiting) IsHeld(uid types.UID) bool {
	_, ok := w.pods[uid]
	return ok
}

// Drop forgets a pod; it reports whether it was held.
func (w *Waiting) Drop(uid types.UID) bool {
	_, ok := w.pods[uid]
	delete(w.pods, uid)
	return ok
}

// Held are the pods held, the oldest first.
func (w *Waiting) Held() []*corev1.Pod {
	pods := slices.Collect(maps.Values(w.pods))
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.UID, b.UID))
	})
	return pods
}
