package localapi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Provider is what the server reads. It is implemented by the wiring over
// the agent and the config sources; every method must be safe for
// concurrent use and return promptly.
type Provider interface {
	// Pods lists every pod the agent knows.
	Pods() []PodInfo
	// Timeline returns what happened to a pod, oldest first.
	Timeline(uid types.UID) []TimelineEntry
	// FileErrors returns the current refusal of each refused manifest file,
	// by path; nil when there is no file source.
	FileErrors() map[string]error
	// HTTPError returns the manifest URL and its last error; url is empty
	// when there is no HTTP source, err nil when the last poll succeeded.
	HTTPError() (url string, err error)
	// Ready returns nil when the agent is ready, or why not.
	Ready() error
	// Problems lists faults that stop no pod, one sentence each.
	Problems() []string
}

// PodInfo is one pod as the Provider reports it.
type PodInfo struct {
	Pod    *corev1.Pod
	Status corev1.PodStatus
	// WorkerPhase is the phase of the pod's worker (sync, terminating,
	// terminated).
	WorkerPhase string
	Source      string
	ConfigHash  string
	// Origin is the manifest file or URL, or "" when unknown.
	Origin string
	// Restored: brought back from the checkpoint at start. Adopted: found
	// running at start, its containers kept.
	Restored bool
	Adopted  bool
	// Mirror is a static pod's mirror pod, in connected mode.
	Mirror *Mirror
	// Processes says, by the status's container ID, what the agent knows
	// of the processes of running containers: see Container.Process.
	Processes map[string]string
}
