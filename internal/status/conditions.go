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
	// ReasonReadinessGatesNotReady: the containers are ready, but a
	// condition the pod's spec.readinessGates name is missing or not True.
	ReasonReadinessGatesNotReady = "ReadinessGatesNotReady"
	// ReasonFailedMount: the pod's volumes could not be set up.
	ReasonFailedMount = "FailedMount"
)

// ownedConditions are the condition types the agent computes; any other
// condition of a pod (a readiness gate's, a controller's) is someone
// else's, set in the apiserver, and the agent only carries it.
var ownedConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled,
	corev1.PodResizePending, corev1.PodResizeInProgress,
}

// Owned reports whether the agent computes conditions of type t: a
// writer of pod status keeps every other condition as the apiserver has it,
// but for the shared ones (Shared).
func Owned(t corev1.PodConditionType) bool { return slices.Contains(ownedConditions, t) }

// Shared reports whether conditions of type t are set by others and by
// the agent too: DisruptionTarget, which the agent sets on a pod it
// evicts, and the controllers on one they disrupt. As under the kubelet,
// the agent's replaces theirs once the pod has finished.
func Shared(t corev1.PodConditionType) bool { return t == corev1.DisruptionTarget }

// conditions computes the pod's conditions: the ones others set in the
// apiserver's status of the pod (pod.Status) as they are, then the
// agent's own, in the kubelet's order. An own condition keeps its previous
// transition time while its status stays.
func conditions(pod *corev1.Pod, rs *runtime.PodStatus, st, prev *corev1.PodStatus, now time.Time, volumesErr error) []corev1.PodCondition {
	terminal := podtypes.IsTerminal(st.Phase)
	notInit := notInitialized(pod, st.InitContainerStatuses)
	ready, reason, message := readiness(pod, st)
	var volReason, volMessage string
	if volumesErr != nil {
		volReason, volMessage = ReasonFailedMount, volumesErr.Error()
	}
	out := foreignConditions(pod.Status.Conditions)
	podReady, podReason, podMessage := ready, reason, message
	if ready {
		podReady, podReason, podMessage = gatesReady(pod, out)
	}
	return append(out,
		condition(corev1.PodReadyToStartContainers, sandboxReady(rs) && !terminal && volumesErr == nil, volReason, volMessage, prev, now),
		condition(corev1.PodInitialized, len(notInit) == 0, ReasonContainersNotInitialized, unready("incomplete", notInit), prev, now),
		condition(corev1.PodReady, podReady, podReason, podMessage, prev, now),
		condition(corev1.ContainersReady, ready, reason, message, prev, now),
		condition(corev1.PodScheduled, true, "", "", prev, now),
	)
}

// foreignConditions copies the conditions of list the agent does not own.
func foreignConditions(list []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range list {
		if !Owned(c.Type) {
			out = append(out, *c.DeepCopy())
		}
	}
	return out
}

// gatesReady is the Ready condition of a pod whose containers are ready:
// true when the condition each of its readiness gates names is True among
// conds, else false with the kubelet's reason and a message per gate.
func gatesReady(pod *corev1.Pod, conds []corev1.PodCondition) (ready bool, reason, message string) {
	var why []string
	for _, g := range pod.Spec.ReadinessGates {
		i := slices.IndexFunc(conds, func(c corev1.PodCondition) bool { return c.Type == g.ConditionType })
		switch {
		case i < 0:
			why = append(why, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case conds[i].Status != corev1.ConditionTrue:
			why = append(why, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, conds[i].Status))
		}
	}
	if len(why) > 0 {
		return false, ReasonReadinessGatesNotReady, strings.Join(why, ", ")
	}
	return true, "", ""
}

// GateConditionsDiffer reports whether the conditions pod's readiness gates
// name differ between the apiserver's status of the pod (pod.Status) and
// st, the status generated last: the pod's Ready condition must then be
// computed again.
func GateConditionsDiffer(pod *corev1.Pod, st *corev1.PodStatus) bool {
	find := func(list []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
		if i := slices.IndexFunc(list, func(c corev1.PodCondition) bool { return c.Type == t }); i >= 0 {
			return &list[i]
		}
		return nil
	}
	for _, g := range pod.Spec.ReadinessGates {
		a, b := find(pod.Status.Conditions, g.ConditionType), find(st.Conditions, g.ConditionType)
		if (a == nil) != (b == nil) || a != nil && a.Status != b.Status {
			return true
		}
	}
	return false
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
	if podtypes.IsTerminal(st.Phase) {
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
