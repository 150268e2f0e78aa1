package status

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The kubelet's waiting reasons for containers that do not run yet.
const (
	ReasonContainerCreating = "ContainerCreating"
	ReasonPodInitializing   = "PodInitializing"
	// ReasonStatusUnknown: the runtime cannot tell the container's state.
	ReasonStatusUnknown = "ContainerStatusUnknown"
)

// containerStatuses reports each container of specs, in spec order. A
// container the runtime does not hold yet is waiting (PodInitializing in a
// pod with init containers, as the kubelet reports it, else
// ContainerCreating, or the reason of a pod-wide failure). A container
// whose newest start failed is waiting with that failure's reason, and its
// newest termination becomes the last one. In a terminal pod, a container
// the runtime no longer holds keeps the terminated state it was last
// reported in (prev), marked as such: nothing is invented for it.
func containerStatuses(specs []corev1.Container, rs *runtime.PodStatus, reasons map[string]waiting, podWide *waiting, hasInit bool, prev []corev1.ContainerStatus, terminal bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	byName := map[string][]*runtime.ContainerStatus{}
	for i := range rs.Containers {
		c := &rs.Containers[i]
		byName[c.Name] = append(byName[c.Name], c) // newest first, as the runtime sorts them
	}
	defaultReason := ReasonContainerCreating
	if hasInit {
		defaultReason = ReasonPodInitializing
	}
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for _, spec := range specs {
		cs := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image, Started: new(false)}
		instances := byName[spec.Name]
		if last := lastTerminated(prev, spec.Name); len(instances) == 0 && terminal && last != nil {
			out = append(out, *last)
			continue
		}
		if len(instances) == 0 {
			w := waiting{reason: defaultReason}
			if podWide != nil {
				w = *podWide
			}
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
		} else {
			latest := instances[0]
			fillFromRuntime(&cs, latest)
			cs.Resources, cs.AllocatedResources = containerResources(&spec, latest)
			if len(instances) > 1 && instances[1].State == runtime.ContainerStateExited {
				cs.LastTerminationState = corev1.ContainerState{Terminated: terminated(instances[1])}
			}
		}
		if w, ok := reasons[spec.Name]; ok && cs.State.Running == nil {
			if cs.State.Terminated != nil {
				cs.LastTerminationState = cs.State
			}
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}}
		}
		out = append(out, cs)
	}
	return out
}

// lastTerminated returns the named container's previous status if it was
// terminated: once the runtime no longer holds a container (the agent
// removed it after the pod finished, maybe before a restart), it ended as
// last observed, its message unchanged (it is the container's own).
func lastTerminated(prev []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range prev {
		if prev[i].Name == name && prev[i].State.Terminated != nil {
			return prev[i].DeepCopy()
		}
	}
	return nil
}

func fillFromRuntime(cs *corev1.ContainerStatus, c *runtime.ContainerStatus) {
	cs.ContainerID = ContainerID(c.ID)
	if c.Image != "" {
		cs.Image = c.Image
	}
	cs.ImageID = c.ImageRef
	cs.RestartCount = int32(c.RestartCount) // #nosec G115 -- one per restart, with back-off: never near 2^31
	switch c.State {
	case runtime.ContainerStateRunning:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metaTime(c.StartedAt)}
		cs.Started = new(true) // applyProbes decides Started and Ready
	case runtime.ContainerStateExited:
		cs.State.Terminated = terminated(c)
	case runtime.ContainerStateCreated:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonStatusUnknown}
	}
}

func terminated(c *runtime.ContainerStatus) *corev1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Completed"
		if c.ExitCode != 0 {
			reason = "Error"
		}
	}
	return &corev1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      reason,
		Message:     c.Message,
		StartedAt:   metaTime(c.StartedAt),
		FinishedAt:  metaTime(c.FinishedAt),
		ContainerID: ContainerID(c.ID),
	}
}

// ContainerID is the API form of a runtime container ID.
func ContainerID(id string) string {
	if id == "" {
		return ""
	}
	return RuntimeName + "://" + id
}

// RuntimeID is the runtime's ID of an API container ID
// ("<runtime>://<id>").
func RuntimeID(apiID string) string {
	_, id, found := strings.Cut(apiID, "://")
	if !found {
		return apiID
	}
	return id
}

// metaTime truncates to the API's one-second resolution, so that a status
// survives a round trip through JSON unchanged.
func metaTime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

// ephemeralStatuses is the status of each ephemeral container: as another
// container's, never ready, and waiting to be created (not for the pod's
// initialization) until it is.
func ephemeralStatuses(pod *corev1.Pod, rs *runtime.PodStatus, reasons map[string]waiting, prev []corev1.ContainerStatus, terminal bool) []corev1.ContainerStatus {
	if len(pod.Spec.EphemeralContainers) == 0 {
		return nil
	}
	specs := make([]corev1.Container, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		specs[i] = *podtypes.EphemeralContainer(&pod.Spec.EphemeralContainers[i])
	}
	out := containerStatuses(specs, rs, reasons, nil, false, prev, terminal)
	for i := range out {
		out[i].Ready = false
	}
	return out
}
