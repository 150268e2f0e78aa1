package runtime

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// These types are what callers of the package see of the runtime. They
// carry no CRI type, so that a package which only consumes pod state (the
// PLEG, status, the agent) does not program against the CRI API.

// ContainerState is the state of one container as the runtime reports it.
type ContainerState string

const (
	// ContainerStateCreated: created but never started (a failed start, or a
	// start still to come).
	ContainerStateCreated ContainerState = "created"
	// ContainerStateRunning: its process runs.
	ContainerStateRunning ContainerState = "running"
	// ContainerStateExited: it ran and exited; ExitCode and FinishedAt are set.
	ContainerStateExited ContainerState = "exited"
	// ContainerStateUnknown: the runtime cannot tell. It may still run.
	ContainerStateUnknown ContainerState = "unknown"
)

// SandboxState is the state of a pod sandbox.
type SandboxState string

const (
	// SandboxReady: the sandbox runs and containers may join it.
	SandboxReady SandboxState = "ready"
	// SandboxNotReady: the sandbox was stopped or lost its network.
	SandboxNotReady SandboxState = "notready"
)

// Pod is a pod as the runtime's lists show it, identified by the labels its
// sandboxes and containers carry. It may be a pod the agent has no spec for.
type Pod struct {
	ID        types.UID
	Name      string
	Namespace string
	// Sandboxes and Containers are sorted newest first.
	Sandboxes  []Sandbox
	Containers []Container
}

// Sandbox is one pod sandbox as listed.
type Sandbox struct {
	ID        string
	State     SandboxState
	Attempt   uint32
	CreatedAt time.Time
}

// Container is one container as listed.
type Container struct {
	ID        string
	Name      string
	SandboxID string
	State     ContainerState
	Attempt   uint32
	Image     string
	// Hash is the spec hash the container was created from.
	Hash      string
	CreatedAt time.Time
}

// PodStatus is the runtime's detailed view of one pod. A pod unknown to the
// runtime has a PodStatus with only ID set.
type PodStatus struct {
	ID        types.UID
	Name      string
	Namespace string
	// IPs are the addresses of the newest ready sandbox, primary first.
	IPs []string
	// Sandboxes and Containers are sorted newest first.
	Sandboxes  []SandboxStatus
	Containers []ContainerStatus
}

// neverStarted reports whether the instance never ran: created and never
// started, or ended by a start that did not happen (an agent killed
// inside CreateContainer or StartContainer, a start that failed).
func (c *ContainerStatus) neverStarted() bool {
	return c.State == ContainerStateCreated || c.State == ContainerStateExited && c.StartedAt.IsZero()
}

// nextRestartCount is the restart count of the instance that replaces c
// (nil: none ran yet). Only an instance that started counts: one that
// never started is replaced under its own count, so restarts count what
// really ran.
func (c *ContainerStatus) nextRestartCount() int {
	switch {
	case c == nil:
		return 0
	case c.neverStarted():
		return c.RestartCount
	}
	return c.RestartCount + 1
}

// SandboxStatus describes one pod sandbox.
type SandboxStatus struct {
	ID          string
	State       SandboxState
	Attempt     uint32
	IP          string
	HostNetwork bool
	CreatedAt   time.Time
}

// ContainerStatus describes one container (instance) of a pod.
type ContainerStatus struct {
	ID        string
	Name      string
	SandboxID string
	State     ContainerState
	CreatedAt time.Time
	// StartedAt and FinishedAt are zero until the container started and
	// exited.
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	// RestartCount is how many instances of this container ran before this
	// one, from the io.kubernetes.container.restartCount annotation.
	RestartCount int
	Image        string
	ImageRef     string
	// Hash is the spec hash the container was created from (see HashContainer).
	Hash string
	// Resources are the cpu and memory requests and limits it runs with:
	// those it was created with, or an in-place resize gave it; nil when
	// unknown (made by an agent before resizes were tracked).
	Resources *corev1.ResourceRequirements
}

// LatestContainer returns the newest instance of the named container, or nil.
func (s *PodStatus) LatestContainer(name string) *ContainerStatus {
	if s == nil {
		return nil
	}
	for i := range s.Containers {
		if s.Containers[i].Name == name {
			return &s.Containers[i]
		}
	}
	return nil
}

// RunningContainers returns the containers whose process may run: running
// ones and those in an unknown state.
func (s *PodStatus) RunningContainers() []ContainerStatus {
	if s == nil {
		return nil
	}
	var out []ContainerStatus
	for _, c := range s.Containers {
		if c.State == ContainerStateRunning || c.State == ContainerStateUnknown {
			out = append(out, c)
		}
	}
	return out
}

// Mount is one bind mount of a host path into a container.
type Mount struct {
	ContainerPath string
	HostPath      string
	ReadOnly      bool
	// Propagation is the volumeMount's mountPropagation; empty: None.
	Propagation corev1.MountPropagationMode
	// SELinuxRelabel asks the runtime to relabel the host path for the
	// container, on a node that runs SELinux (Options.SELinuxEnabled): a
	// volume the agent made, at its first mount in the pod, as the kubelet
	// relabels them; never a hostPath.
	SELinuxRelabel bool
}

// ContainerMounts maps a container's name (init or app container) to the
// mounts its volumeMounts resolve to. See the volumes package.
type ContainerMounts map[string][]Mount
