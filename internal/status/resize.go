package status

import (
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// reasonResizeError is the PodResizeInProgress condition's reason when an
// in-place resize failed, as the kubelet's.
const reasonResizeError = "Error"

// containerResources are a container's status resources: what it was
// allocated (the pod given to Generate is as allocated), with the cpu and
// memory it runs with, when it runs; and its allocated requests.
func containerResources(spec *corev1.Container, c *runtime.ContainerStatus) (*corev1.ResourceRequirements, corev1.ResourceList) {
	r := spec.Resources.DeepCopy()
	r.Claims = nil
	if c.State == runtime.ContainerStateRunning && c.Resources != nil {
		*r = allocation.Overlay(*r, *c.Resources)
	}
	return r, spec.Resources.DeepCopy().Requests
}

// resizeConditions are the PodResizePending condition of a resize the
// node has not given yet (in.ResizePending), and the PodResizeInProgress
// condition while a running container runs with other resources than it
// was given, with reason Error and the error when resizing it failed.
func resizeConditions(in Input, rs *runtime.PodStatus, prev *corev1.PodStatus) []corev1.PodCondition {
	pod := in.Pod
	var out []corev1.PodCondition
	if p := in.ResizePending; p.Reason != "" {
		out = append(out, resizeCondition(corev1.PodResizePending, p.Reason, p.Message, prev, in.Now))
	}
	var failed error
	if in.Result != nil {
		for _, a := range in.Result.Actions {
			if a.Kind == runtime.ActionResizeContainer && a.Err != nil {
				failed = errors.Join(failed, a.Err)
			}
		}
	}
	inProgress := failed != nil
	for _, c := range podtypes.Containers(&pod.Spec) {
		if st := rs.LatestContainer(c.Name); st != nil && st.NeedsResize(c) {
			inProgress = true
		}
	}
	if inProgress && !podtypes.IsTerminal(prev.Phase) {
		reason, message := "", ""
		if failed != nil {
			reason, message = reasonResizeError, failed.Error()
		}
		out = append(out, resizeCondition(corev1.PodResizeInProgress, reason, message, prev, in.Now))
	}
	return out
}

// resizeCondition is a resize condition, true: it is there only while it
// holds. Its transition time stays while its reason does.
func resizeCondition(t corev1.PodConditionType, reason, message string, prev *corev1.PodStatus, now time.Time) corev1.PodCondition {
	c := corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metaTime(now), LastProbeTime: metaTime(now)}
	if i := slices.IndexFunc(prev.Conditions, func(p corev1.PodCondition) bool { return p.Type == t }); i >= 0 && prev.Conditions[i].Reason == reason {
		c.LastTransitionTime, c.LastProbeTime = prev.Conditions[i].LastTransitionTime, prev.Conditions[i].LastProbeTime
	}
	return c
}
