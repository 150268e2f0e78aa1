package status

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Probes is what a container instance's probes have found, keyed by its
// runtime ID; *prober.Manager satisfies it. A nil Probes has found nothing.
type Probes interface {
	// Started reports whether the instance's startup probe has succeeded.
	Started(containerID string) bool
	// Ready reports whether the instance's readiness probe succeeded last.
	Ready(containerID string) bool
	// KillReason says why the agent killed the instance (a failed liveness
	// or startup probe), or "" if it did not.
	KillReason(containerID string) string
}

// applyProbes sets Started and Ready of the running containers of st from
// their probes, as the kubelet does: a container with a startup probe has
// started once it passed; a started container without a readiness probe
// is ready, one with it once the probe passed. A container the agent
// killed for its probe says so in its termination message.
func applyProbes(pod *corev1.Pod, st *corev1.PodStatus, probes Probes) {
	apply := func(specs []corev1.Container, statuses []corev1.ContainerStatus) {
		for i := range statuses {
			cs := &statuses[i]
			if i >= len(specs) || specs[i].Name != cs.Name {
				continue // statuses follow the spec's order; anything else is not ours
			}
			spec := &specs[i]
			markKilled(cs.State.Terminated, probes)
			markKilled(cs.LastTerminationState.Terminated, probes)
			if cs.State.Running == nil {
				cs.Ready = false
				continue
			}
			id := RuntimeID(cs.ContainerID)
			started := spec.StartupProbe == nil || probes != nil && probes.Started(id)
			cs.Started = &started
			cs.Ready = started && (spec.ReadinessProbe == nil || probes != nil && probes.Ready(id))
		}
	}
	apply(pod.Spec.InitContainers, st.InitContainerStatuses)
	apply(pod.Spec.Containers, st.ContainerStatuses)
}

func markKilled(t *corev1.ContainerStateTerminated, probes Probes) {
	if t == nil || probes == nil {
		return
	}
	why := probes.KillReason(RuntimeID(t.ContainerID))
	if why == "" || strings.Contains(t.Message, why) {
		return
	}
	if t.Message != "" {
		why += "; " + t.Message
	}
	t.Message = why
}

// WithProbes returns st with its containers' Started and Ready and the
// pod's Ready and ContainersReady conditions recomputed from probes, all
// else unchanged: what a probe's new result changes at once, before the
// pod's next sync.
func WithProbes(pod *corev1.Pod, st *corev1.PodStatus, probes Probes, now time.Time) corev1.PodStatus {
	out := *st.DeepCopy()
	if podtypes.IsTerminal(out.Phase) {
		return out
	}
	applyProbes(pod, &out, probes)
	for i := range pod.Spec.InitContainers {
		if i < len(out.InitContainerStatuses) && !podtypes.IsSidecar(&pod.Spec.InitContainers[i]) {
			cs := &out.InitContainerStatuses[i]
			cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		}
	}
	ready, reason, message := readiness(pod, &out)
	podReady, podReason, podMessage := ready, reason, message
	if ready {
		// The readiness gates' conditions as the status carries them.
		podReady, podReason, podMessage = gatesReady(pod, out.Conditions)
	}
	for i, c := range out.Conditions {
		switch c.Type {
		case corev1.ContainersReady:
			out.Conditions[i] = condition(c.Type, ready, reason, message, st, now)
		case corev1.PodReady:
			out.Conditions[i] = condition(c.Type, podReady, podReason, podMessage, st, now)
		}
	}
	return out
}
