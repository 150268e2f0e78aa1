package status

import (
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// RuntimeName prefixes container IDs in the API status: "containerd://<id>".
const RuntimeName = "containerd"

// Input is everything Generate looks at.
type Input struct {
	Pod *corev1.Pod
	// Runtime is what the runtime holds of the pod; nil means nothing.
	Runtime *runtime.PodStatus
	// Result is the outcome of the newest runtime.SyncPod, or nil. A
	// container whose start failed there is reported waiting with the
	// reason of its error (CrashLoopBackOff, ErrImageNeverPull, ...).
	Result *runtime.SyncResult
	// Err is the newest sync error. When it names a waiting reason but no
	// container (a sandbox that could not be created), containers that do
	// not exist yet are reported waiting with that reason.
	Err error
	// VolumesErr says why the pod's volumes could not be set up (an object
	// they need is missing, say): the PodReadyToStartContainers condition
	// is false with reason FailedMount and this message.
	VolumesErr error
	// Terminal says the pod will run nothing more: it finished, or it was
	// stopped for good. Its phase is then Succeeded or Failed.
	Terminal bool
	// Previous is the status generated before for this pod, or nil. Its
	// start time and condition transition times carry over, and a terminal
	// phase in it is kept. Without a start time in it, the start time of
	// the apiserver's status of the pod (Pod.Status) carries over, as the
	// kubelet's does: a pod an agent restarted on keeps its start, and its
	// active deadline counts from it.
	Previous *corev1.PodStatus
	// HostIPs are the node's IPs, primary first, at most one per family
	// (as the Node's status reports them); nil when unknown. They become the
	// status's hostIP(s), and the pod IPs of a host-network pod.
	HostIPs []string
	// Now stamps the start time and condition transitions.
	Now time.Time
	// Probes says what the containers' probes found; nil: nothing yet.
	Probes Probes
	// Evicted, when set, is why the node evicts the pod, in the kubelet's
	// words: a pod not already finished fails with reason Evicted.
	Evicted string
	// ResizePending, when set, says why the node has not given the pod
	// the resources its resize asks: the PodResizePending condition. (Pod
	// is the pod as allocated: a running container with other resources
	// than it has is being resized, PodResizeInProgress.)
	ResizePending allocation.Pending
}

// ReasonEvicted is the reason of a pod the node evicted, as the kubelet's.
const ReasonEvicted = "Evicted"

// Generate computes the pod's API status.
func Generate(in Input) corev1.PodStatus {
	pod := in.Pod
	rs := in.Runtime
	if rs == nil {
		rs = &runtime.PodStatus{ID: pod.UID}
	}
	prev := in.Previous
	if prev == nil {
		prev = &corev1.PodStatus{}
	}
	if podtypes.IsTerminal(prev.Phase) && len(rs.Sandboxes) == 0 && len(rs.Containers) == 0 {
		// The pod completed and its containers were removed (an agent
		// restarted on its checkpointed final status): nothing new can be
		// learned of it, and the containers' messages are theirs, kept
		// as they ended.
		return *prev.DeepCopy()
	}
	reasons := waitingReasons(in.Result, in.Err)
	podWide := podWideReason(in.Result, in.Err)

	var st corev1.PodStatus
	hasInit := len(pod.Spec.InitContainers) > 0
	st.InitContainerStatuses = containerStatuses(pod.Spec.InitContainers, rs, reasons, podWide, hasInit, prev.InitContainerStatuses, in.Terminal)
	st.ContainerStatuses = containerStatuses(pod.Spec.Containers, rs, reasons, podWide, hasInit, prev.ContainerStatuses, in.Terminal)
	st.EphemeralContainerStatuses = ephemeralStatuses(pod, rs, reasons, prev.EphemeralContainerStatuses, in.Terminal)
	applyProbes(pod, &st, in.Probes)
	limitTerminationMessages(pod, &st)
	for i := range pod.Spec.InitContainers {
		// An init container is ready once it completed; a sidecar as its probes say.
		if !podtypes.IsSidecar(&pod.Spec.InitContainers[i]) {
			cs := &st.InitContainerStatuses[i]
			cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		}
	}

	start := prev.StartTime
	if start == nil {
		start = pod.Status.StartTime
	}
	if start == nil {
		t := metaTime(in.Now)
		start = &t
	}
	st.StartTime = start
	st.Reason, st.Message = prev.Reason, prev.Message
	st.Phase = podPhase(pod, st.InitContainerStatuses, st.ContainerStatuses, in.Terminal)
	switch {
	case podtypes.IsTerminal(prev.Phase):
		st.Phase = prev.Phase
	case in.Evicted != "":
		st.Phase, st.Reason, st.Message = corev1.PodFailed, ReasonEvicted, in.Evicted
	case PastActiveDeadline(pod, &st, in.Now):
		// What still runs is stopped as the pod terminates.
		st.Phase, st.Reason, st.Message = corev1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded
	}
	if podtypes.IsTerminal(st.Phase) {
		for i := range st.ContainerStatuses {
			st.ContainerStatuses[i].Ready = false
		}
	}

	setIPs(&st, pod.Spec.HostNetwork, rs.IPs, in.HostIPs)
	st.QOSClass = podtypes.QOSClass(pod)
	st.Conditions = conditions(pod, rs, &st, prev, in.Now, in.VolumesErr)
	st.Conditions = append(st.Conditions, resizeConditions(in, rs, prev)...)
	if st.Reason == ReasonEvicted {
		st.Conditions = withDisruption(st.Conditions, prev, st.Message, in.Now)
	}
	// What the status says is of this generation of the pod's spec.
	st.ObservedGeneration = pod.Generation
	for i := range st.Conditions {
		if Owned(st.Conditions[i].Type) {
			st.Conditions[i].ObservedGeneration = pod.Generation
		}
	}
	return st
}

// withDisruption adds to the conditions of an evicted pod the
// DisruptionTarget the kubelet sets, with reason TerminationByKubelet,
// unless one is there; the time of prev's is kept.
func withDisruption(conds []corev1.PodCondition, prev *corev1.PodStatus, message string, now time.Time) []corev1.PodCondition {
	for _, c := range conds {
		if c.Type == corev1.DisruptionTarget {
			return conds
		}
	}
	c := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonTerminationByKubelet, Message: message, LastTransitionTime: metaTime(now)}
	for _, p := range prev.Conditions {
		if p.Type == corev1.DisruptionTarget {
			c = p
		}
	}
	return append(conds, c)
}

// waitingReasons maps each container whose newest start failed to that
// failure, from the actions of a sync.
func waitingReasons(res *runtime.SyncResult, err error) map[string]waiting {
	out := map[string]waiting{}
	if res == nil {
		return out
	}
	for _, a := range res.Actions {
		if a.Kind != runtime.ActionStartContainer || a.Container == "" {
			continue
		}
		if a.Err == nil {
			delete(out, a.Container)
			continue
		}
		reason := runtime.WaitingReason(a.Err)
		if reason == "" {
			reason = "RunContainerError"
		}
		out[a.Container] = waiting{reason: reason, message: a.Err.Error()}
	}
	return out
}

// podWideReason is the waiting reason of a sync that failed before any
// container could be started, or none.
func podWideReason(res *runtime.SyncResult, err error) *waiting {
	if err == nil {
		return nil
	}
	if res != nil {
		for _, a := range res.Actions {
			if a.Kind == runtime.ActionStartContainer && a.Err != nil {
				return nil // reported per container
			}
		}
	}
	var be *runtime.BackoffError
	if errors.As(err, &be) {
		return nil
	}
	if reason := runtime.WaitingReason(err); reason != "" {
		return &waiting{reason: reason, message: err.Error()}
	}
	return nil
}

type waiting struct{ reason, message string }
