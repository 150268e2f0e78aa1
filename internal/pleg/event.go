package pleg

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// EventType says what changed in a pod.
type EventType string

const (
	// ContainerStarted: a container is now running.
	ContainerStarted EventType = "ContainerStarted"
	// ContainerDied: a container is no longer running.
	ContainerDied EventType = "ContainerDied"
	// ContainerRemoved: a container is gone from the runtime.
	ContainerRemoved EventType = "ContainerRemoved"
	// PodSandboxChanged: a sandbox appeared, changed state, or went away.
	PodSandboxChanged EventType = "PodSandboxChanged"
	// ContainerChanged: a container entered another state (created,
	// unknown).
	ContainerChanged EventType = "ContainerChanged"
)

// PodLifecycleEvent is one change of one pod. Data is the container's or
// sandbox's ID.
type PodLifecycleEvent struct {
	ID   types.UID
	Type EventType
	Data string
}

// Runtime is what the PLEG needs of the container runtime;
// *runtime.Runtime satisfies it.
type Runtime interface {
	GetPods(ctx context.Context) ([]*runtime.Pod, error)
	GetPodStatus(ctx context.Context, uid types.UID) (*runtime.PodStatus, error)
}
