package podworkers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Syncer does the work of a pod worker; the agent implements it. For each
// pod UID the workers call it from one goroutine, one call at a time, in
// this order:
//
//	SyncPod*  ->  SyncTerminatingPod+  ->  SyncTerminatedPod+
//
// SyncPod is called until the pod reaches a terminal phase or is killed,
// SyncTerminatingPod until it succeeds, then SyncTerminatedPod until it
// succeeds; "+" means a failed call is retried. A pod known only to the
// runtime (no spec) gets SyncTerminatingRuntimePod until it succeeds and
// nothing else. Calls for different pods run concurrently.
//
// Every method must return promptly with the context's error once its
// context is cancelled: the workers cancel an in-flight SyncPod when the pod
// is killed, and an in-flight SyncTerminatingPod when a shorter grace period
// arrives, and then call the next method at once.
type Syncer interface {
	// SyncPod makes the pod's runtime state match its spec. It reports
	// terminal=true once the pod has reached a terminal phase (Succeeded or
	// Failed); the workers then terminate it. updateType says what caused
	// the call; it is the newest of the updates coalesced into this call, so
	// a pod's first SyncPod is not guaranteed to see Create. A static pod's
	// mirror pod is not the workers' business: the agent keeps it apart.
	SyncPod(ctx context.Context, updateType UpdateType, pod *corev1.Pod) (terminal bool, err error)

	// SyncTerminatingPod stops every container of the pod, giving them
	// exactly gracePeriod seconds: 0 means at once. It must not return nil until no
	// container of the pod can be running. statusFn, never nil, amends the
	// final status the agent reports (for example an eviction's reason); the
	// Syncer applies it to the status it computes.
	SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, gracePeriod int64, statusFn func(*corev1.PodStatus)) error

	// SyncTerminatingRuntimePod stops every container of a pod that exists
	// only in the runtime: one the agent has no spec for, such as a pod left
	// from before a restart whose source no longer lists it.
	SyncTerminatingRuntimePod(ctx context.Context, pod RuntimePod) error

	// SyncTerminatedPod releases what the pod held once no container runs
	// (volumes, cgroups, directories) and records its final status.
	SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error
}

// RuntimePod names a pod found in the container runtime that has no spec in
// the agent's configuration. It can only be killed.
type RuntimePod struct {
	UID       types.UID
	Name      string
	Namespace string
}
