package node

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// watchNode is a reflector of this Node alone into a store that hands
// every change to observed and deleted: one watch, no cache to keep.
func (n *Node) watchNode() *cache.Reflector {
	sel := fields.OneTermEqualSelector(metav1.ObjectNameField, n.opts.Name).String()
	nodes := n.client.CoreV1().Nodes()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			list, err := nodes.List(ctx, o)
			n.noteAnswer(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			w, err := nodes.Watch(ctx, o)
			n.noteAnswer(err)
			return w, err
		},
	}
	// Reconnect as the pod source does, to see soon what changed while
	// the apiserver was away.
	backoff := watchBackoff
	// The wrapper carries over whether the client can stream the initial
	// list through the watch (a fake clientset cannot).
	return cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, n.client), &corev1.Node{},
		&nodeStore{n: n}, cache.ReflectorOptions{Name: "node " + n.opts.Name, Backoff: &backoff})
}

// watchBackoff paces the Node watch's reconnections to at most one every 2
// to 3 s, as the pod source paces its own: client-go's default grows to 30
// s, too slow to see soon after the apiserver's return what changed while
// it was away. It is a value; each reflector gets a copy.
var watchBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 4, Cap: 2 * time.Second}

// nodeStore is the reflector's store: it keeps nothing but tells the Node.
type nodeStore struct{ n *Node }

func (s *nodeStore) Add(obj any) error    { s.n.observed(obj); return nil }
func (s *nodeStore) Update(obj any) error { s.n.observed(obj); return nil }
func (s *nodeStore) Delete(obj any) error { s.n.deleted(obj); return nil }

// Replace is a relist: the Node is there, or it was deleted while the
// watch was down.
func (s *nodeStore) Replace(items []any, rv string) error {
	if len(items) == 0 {
		s.n.gone(rv)
		return nil
	}
	for _, obj := range items {
		s.n.observed(obj)
	}
	s.n.apiserverWasAway()
	return nil
}

func (s *nodeStore) List() []any                        { return nil }
func (s *nodeStore) ListKeys() []string                 { return nil }
func (s *nodeStore) Get(any) (any, bool, error)         { return nil, false, nil }
func (s *nodeStore) GetByKey(string) (any, bool, error) { return nil, false, nil }
func (s *nodeStore) Resync() error                      { return nil }
