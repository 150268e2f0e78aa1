package objectcache

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objectKey names one cached object.
type objectKey struct{ namespace, name string }

func (k objectKey) String() string { return k.namespace + "/" + k.name }

// podKey names one registration. The UID tells apart two pods that held the
// same name one after the other.
type podKey struct {
	namespace, name string
	uid             types.UID
}

// refStore is a caching strategy as the registry sees it: it counts, per
// object, how many registered pods reference it.
type refStore interface {
	// addRef is called once for each pod that starts referencing key.
	addRef(key objectKey)
	// dropRef is called once for each pod that stops referencing key.
	dropRef(key objectKey)
	// refresh is called, after any addRef, for every object a pod being
	// registered references: the pod is new or has changed, so what it
	// reads should be current.
	refresh(key objectKey)
}

// registry remembers which objects each registered pod references and
// tells its store exactly what changed. Objects live in the pod's
// namespace.
type registry struct {
	names func(*corev1.Pod) []string // sorted and unique
	store refStore

	mu   sync.Mutex // also orders the store calls of concurrent registrations
	pods map[podKey][]string
}

func newRegistry(names func(*corev1.Pod) []string, store refStore) *registry {
	return &registry{names: names, store: store, pods: map[podKey][]string{}}
}

func keyOfPod(pod *corev1.Pod) podKey {
	return podKey{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}
}

// register records the pod's references: objects it references for the
// first time gain a reference, objects it no longer references lose one,
// and every object it references is refreshed.
func (r *registry) register(pod *corev1.Pod) {
	names := r.names(pod)
	key := keyOfPod(pod)
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.pods[key]
	added, dropped := diffSorted(old, names)
	for _, name := range added {
		r.store.addRef(objectKey{pod.Namespace, name})
	}
	for _, name := range names {
		r.store.refresh(objectKey{pod.Namespace, name})
	}
	for _, name := range dropped {
		r.store.dropRef(objectKey{pod.Namespace, name})
	}
	if len(names) == 0 {
		delete(r.pods, key)
		return
	}
	r.pods[key] = names
}

// unregister drops every reference the pod holds. Unregistering a pod that
// is not registered does nothing.
func (r *registry) unregister(pod *corev1.Pod) {
	key := keyOfPod(pod)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.pods[key] {
		r.store.dropRef(objectKey{pod.Namespace, name})
	}
	delete(r.pods, key)
}

// diffSorted returns the names only in next (added) and only in prev
// (dropped); both inputs are sorted and unique.
func diffSorted(prev, next []string) (added, dropped []string) {
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && prev[i] < next[j]):
			dropped = append(dropped, prev[i])
			i++
		case i == len(prev) || next[j] < prev[i]:
			added = append(added, next[j])
			j++
		default:
			i++
			j++
		}
	}
	return added, dropped
}
