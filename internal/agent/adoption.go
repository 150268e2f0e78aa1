package agent

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// adoptionRuntime counts the pods this agent adopted: pods whose first
// sync in this process found containers running and kept them (it killed
// no container and no sandbox). Such containers can only have been started
// by an agent before this one. It wraps the Runtime the syncer uses and
// changes nothing of what it does.
type adoptionRuntime struct {
	Runtime
	onAdopt func(uid types.UID, running int)

	mu      sync.Mutex
	synced  map[types.UID]bool
	adopted map[types.UID]bool
}

func newAdoptionRuntime(rt Runtime, onAdopt func(uid types.UID, running int)) *adoptionRuntime {
	return &adoptionRuntime{Runtime: rt, onAdopt: onAdopt, synced: map[types.UID]bool{}, adopted: map[types.UID]bool{}}
}

func (r *adoptionRuntime) SyncPod(ctx context.Context, pod *corev1.Pod, mounts runtime.ContainerMounts, status *runtime.PodStatus, hooks runtime.SyncHooks) (runtime.SyncResult, error) {
	res, err := r.Runtime.SyncPod(ctx, pod, mounts, status, hooks)
	if ctx.Err() != nil {
		return res, err // an interrupted sync tells nothing
	}
	r.mu.Lock()
	first := !r.synced[pod.UID]
	r.synced[pod.UID] = true
	running := len(status.RunningContainers())
	adopted := first && running > 0 && keptAll(res)
	if adopted {
		r.adopted[pod.UID] = true
	}
	r.mu.Unlock()
	if adopted {
		r.onAdopt(pod.UID, running)
	}
	return res, err
}

// KillPod forgets the pod: a UID started afresh is not an adoption.
func (r *adoptionRuntime) KillPod(ctx context.Context, pod *corev1.Pod, running runtime.Pod, grace *int64) error {
	err := r.Runtime.KillPod(ctx, pod, running, grace)
	if err == nil {
		r.mu.Lock()
		delete(r.synced, running.ID)
		delete(r.adopted, running.ID)
		r.mu.Unlock()
	}
	return err
}

// wasAdopted reports whether the pod's containers were adopted at its first
// sync.
func (r *adoptionRuntime) wasAdopted(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.adopted[uid]
}

// keptAll reports whether a sync left every container and sandbox there
// was in place.
func keptAll(res runtime.SyncResult) bool {
	for _, a := range res.Actions {
		switch a.Kind {
		case runtime.ActionKillPod, runtime.ActionKillContainer, runtime.ActionCreateSandbox:
			return false
		}
	}
	return true
}
