package status

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Condition reasons, as the kubelet gives them.
const (
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonPodCompleted             = "PodCompleted"
	// ReasonFailedMount: the pod's volumes could not be set up.
	ReasonFailedMount = "FailedMount"
)

// conditions computes the pod's conditions, in the kubelet's order. A
// condition keeps its previous transition time while its status stays.
func conditions(pod *corev1.Pod, rs *runtime.PodStatus, st, prev *corev1.PodStatus, now time.Time, volumesErr error) []corev1.PodCondition {
	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	notInit := notInitialized(pod, st.InitContainerStatuses)
	ready, reason, message := readiness(pod, st)
	var volReason, volMessage string
	if volumesErr != nil {
		volReason, volMessage = ReasonFailedMount, volumesErr.Error()
	}
	return []corev1.PodCondition{
		condition(corev1.PodReadyToStartContainers, sandboxReady(rs) && !terminal && volumesErr == nil, volReason, volMessage, prev, now),
		condition(corev1.PodInitialized, len(notInit) == 0, ReasonContainersNotInitialized, unready("incomplete", notInit), prev, now),
		condition(corev1.PodReady, ready, reason, message, prev, now),
		condition(corev1.ContainersReady, ready, reason, message, prev, now),
		condition(corev1.PodScheduled, true, "", "", prev, now),
	}
}

// condition builds one condition; reason and message apply when it is
// false. It keeps prev's transition time while its status stays.
func condition(t corev1.PodConditionType, ok bool, reason, message string, prev *corev1.PodStatus, now time.Time) corev1.PodCondition {
	c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: message}
	if ok {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
	}
	c.LastTransitionTime = metaTime(now)
	if i := slices.IndexFunc(prev.Conditions, func(p corev1.PodCondition) bool { return p.Type == t }); i >= 0 &&
		prev.Conditions[i].Status == c.Status {
		c.LastTransitionTime = prev.Conditions[i].LastTransitionTime
	}
	return c
}

// readiness is the pod's Ready (and ContainersReady): every sidecar and
// app container ready, as the kubelet counts them, and the pod not
// terminal.
func readiness(pod *corev1.Pod, st *corev1.PodStatus) (ready bool, reason, message string) {
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return false, ReasonPodCompleted, ""
	}
	var notReady []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if cs := statusOf(st.InitContainerStatuses, c.Name); podtypes.IsSidecar(c) && (cs == nil || !cs.Ready) {
			notReady = append(notNil(notReady), c.Name)
		}
	}
	for _, c := range pod.Spec.Containers {
		if cs := statusOf(st.ContainerStatuses, c.Name); cs == nil || !cs.Ready {
			notReady = append(notNil(notReady), c.Name)
		}
	}
	return len(notReady) == 0, ReasonContainersNotReady, unready("unready", notReady)
}

// sandboxReady reports whether the pod's newest sandbox runs (with an IP
// unless it shares the host's network), so containers can start in it.
func sandboxReady(rs *runtime.PodStatus) bool {
	if len(rs.Sandboxes) == 0 {
		return false
	}
	sb := rs.Sandboxes[0]
	return sb.State == runtime.SandboxReady && (sb.HostNetwork || sb.IP != "" || len(rs.IPs) > 0)
}

// notInitialized lists the init containers that have not completed (or, for
// sidecars, not started).
func notInitialized(pod *corev1.Pod, statuses []corev1.ContainerStatus) []string {
	var out []string
	for _, c := range pod.Spec.InitContainers {
		cs := statusOf(statuses, c.Name)
		sidecar := podtypes.IsSidecar(&c)
		done := false
		switch {
		case cs == nil:
		case sidecar:
			done = cs.Started != nil && *cs.Started
		case cs.State.Terminated != nil:
			done = cs.State.Terminated.ExitCode == 0
		}
		if !done {
			out = append(out, c.Name)
		}
	}
	return out
}

func unready(what string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("containers with %s status: [%s]", what, strings.Join(names, " "))
}

func notNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
