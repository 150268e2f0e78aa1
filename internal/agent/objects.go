package agent

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/objectcache"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// PodObjects is told which API pods exist, so that the ConfigMaps and
// Secrets they reference are read, and watched, for them;
// *podobjects.Objects satisfies it.
type PodObjects interface {
	RegisterPod(*corev1.Pod)
	UnregisterPod(*corev1.Pod)
}

// podFinished is told of each pod whose containers and volumes are gone:
// an API pod reads nothing more, and may go from the apiserver once its
// deletion is asked.
func (a *Agent) podFinished(objects PodObjects) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		if kindOf(pod) == kindAPI {
			if objects != nil {
				objects.UnregisterPod(pod)
			}
			a.api.APIPodFinished(pod)
		}
		a.stops.stopped()
	}
}

// objectRef names a ConfigMap or a Secret, or, with uid, every object of
// one pod.
type objectRef struct {
	secret          bool
	namespace, name string
	uid             types.UID
}

// objectChanges carries changes of ConfigMaps and Secrets from the
// caches' watches to the sync loop, which syncs the pods that use them.
// Adding never blocks; the loop takes everything pending at once.
type objectChanges struct {
	mu      sync.Mutex
	pending []objectRef
	signal  chan struct{}
}

func newObjectChanges() *objectChanges {
	return &objectChanges{signal: make(chan struct{}, 1)}
}

func (c *objectChanges) add(ref objectRef) {
	c.mu.Lock()
	if !slices.Contains(c.pending, ref) {
		c.pending = append(c.pending, ref)
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

func (c *objectChanges) take() []objectRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.pending
	c.pending = nil
	return out
}

// ObjectChanged tells the agent that a ConfigMap (secret false) or a
// Secret its pods may use was created, changed or deleted: the pods that
// use it are synced at once, so that their volumes show the new content
// and a pod waiting for the object starts. Safe from any goroutine; it
// never blocks.
func (a *Agent) ObjectChanged(secret bool, namespace, name string) {
	a.loop.objectChanges.add(objectRef{secret: secret, namespace: namespace, name: name})
}

// ObjectsReady tells the agent that the objects of the pod uid may be read
// now (the apiserver lets the node read them): the pod is synced at once.
// Safe from any goroutine; it never blocks.
func (a *Agent) ObjectsReady(uid types.UID) {
	a.loop.objectChanges.add(objectRef{uid: uid})
}

// syncObjectUsers syncs the API pods that reference the changed objects.
func (l *syncLoop) syncObjectUsers(refs []objectRef) {
	for _, pod := range l.pods.Pods() {
		if podtypes.IsStaticPod(pod) || podtypes.IsMirrorPod(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		if slices.ContainsFunc(refs, func(r objectRef) bool { return uses(pod, r) }) {
			l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
		}
	}
}

func uses(pod *corev1.Pod, r objectRef) bool {
	if r.uid != "" {
		return pod.UID == r.uid
	}
	if pod.Namespace != r.namespace {
		return false
	}
	if r.secret {
		return slices.Contains(objectcache.SecretNames(pod), r.name)
	}
	return slices.Contains(objectcache.ConfigMapNames(pod), r.name)
}
