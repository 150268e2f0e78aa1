package agent

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/timeline"
)

// warnUnrunHooks says, in the log and the pod's timeline, once per worker,
// that the agent does not run the pod's postStart and preStop hooks yet.
// The pod still runs: refusing it would break pods that work without
// their hooks, and skipping them silently would let an operator believe
// that a preStop hook drains the pod before its stop.
func (s *syncer) warnUnrunHooks(pod *corev1.Pod) {
	var hooks []string
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Lifecycle == nil {
				continue
			}
			if c.Lifecycle.PostStart != nil {
				hooks = append(hooks, c.Name+" postStart")
			}
			if c.Lifecycle.PreStop != nil {
				hooks = append(hooks, c.Name+" preStop")
			}
		}
	}
	if len(hooks) == 0 {
		return
	}
	s.log.Info("Lifecycle hooks are not run by this agent yet; the containers start and stop without them",
		"pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID, "hooks", hooks)
	s.timeline.Record(pod.UID, timeline.KindWarning, "lifecycle hooks are not run by this agent yet; the containers start and stop without them: %s",
		strings.Join(hooks, ", "))
}
