package podworkers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// UpdateType says why UpdatePod is called.
type UpdateType int

const (
	// Create is a pod the agent has just been given.
	Create UpdateType = iota + 1
	// Update is a change to a pod's spec or metadata.
	Update
	// Sync asks for a resync of an unchanged pod, for example because the
	// work queue said it is due.
	Sync
	// Kill asks for the pod to be stopped; it cannot be undone.
	Kill
)

var updateTypeNames = [...]string{Create: "create", Update: "update", Sync: "sync", Kill: "kill"}

func (t UpdateType) String() string {
	if t >= Create && t <= Kill {
		return updateTypeNames[t]
	}
	return fmt.Sprintf("UpdateType(%d)", int(t))
}

// UpdatePodOptions is one change to one pod, keyed by its UID.
type UpdatePodOptions struct {
	// Type is required.
	Type UpdateType
	// Pod is the pod's newest spec. Either Pod or RuntimePod is required.
	Pod *corev1.Pod
	// RuntimePod is a pod that exists only in the container runtime. It is
	// used only when Pod is nil, and then only with Type Kill.
	RuntimePod *RuntimePod
	// Kill tunes a Kill; it is invalid with any other Type.
	Kill *KillPodOptions
}

// KillPodOptions tunes one kill of a pod. A pod may be killed several times
// (an API deletion, then an eviction); each kill's options are kept.
type KillPodOptions struct {
	// GracePeriodOverride, if set, bounds the grace period in seconds. A
	// kill can shorten the grace period in force but never lengthen it.
	GracePeriodOverride *int64
	// Evict marks a kill by the agent to reclaim node resources: the pod's
	// content may then be removed as soon as its containers are stopped.
	Evict bool
	// StatusFunc, if set, amends the pod's final status. The functions of
	// all kills are applied in the order the kills arrived, so a later kill
	// overrides what an earlier one set.
	StatusFunc func(*corev1.PodStatus)
	// MayBeRunning says the pod's containers may be running although no
	// worker of this process started them: a pod whose termination was
	// under way when the agent restarted, killed again with its spec so
	// that it is cleaned up in full. Such a pod is terminated even if it
	// never synced here, and a static one holds its full name from this
	// kill until its termination ends, so that no newer pod of that name
	// starts beside its containers.
	MayBeRunning bool
	// Completed, if set, is closed once no container of the pod can run:
	// when its termination has succeeded, or at once if it already has.
	// Each kill needs its own channel. It is not closed if Run ends first.
	Completed chan<- struct{}
}

// target checks the update and returns the UID it is about.
func (o *UpdatePodOptions) target() (types.UID, error) {
	var uid types.UID
	switch {
	case o.Type < Create || o.Type > Kill:
		return "", fmt.Errorf("%w: type %v", ErrInvalidUpdate, o.Type)
	case o.Kill != nil && o.Type != Kill:
		return "", fmt.Errorf("%w: kill options on a %v update", ErrInvalidUpdate, o.Type)
	case o.Pod != nil:
		uid = o.Pod.UID
	case o.RuntimePod != nil:
		if o.Type != Kill {
			return "", fmt.Errorf("%w: runtime pod %s can only be killed, not given a %v update",
				ErrInvalidUpdate, o.RuntimePod.UID, o.Type)
		}
		uid = o.RuntimePod.UID
	default:
		return "", fmt.Errorf("%w: neither Pod nor RuntimePod is set", ErrInvalidUpdate)
	}
	if uid == "" {
		return "", fmt.Errorf("%w: pod %q has no UID", ErrInvalidUpdate, o.fullName())
	}
	return uid, nil
}

// fullName returns the node-unique name of the pod the update is about.
func (o *UpdatePodOptions) fullName() string {
	if o.Pod != nil {
		return podtypes.PodFullName(o.Pod)
	}
	return podtypes.FullName(o.RuntimePod.Name, o.RuntimePod.Namespace)
}

// static reports whether the update is about a static pod. A pod known only
// to the runtime is not: without a spec, nothing says where it came from.
func (o *UpdatePodOptions) static() bool {
	return o.Pod != nil && podtypes.IsStaticPod(o.Pod)
}
