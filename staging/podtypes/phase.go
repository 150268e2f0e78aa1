package podtypes

import corev1 "k8s.io/api/core/v1"

// IsTerminal reports whether a pod in this phase has finished: Succeeded
// or Failed. Such a pod runs nothing more, ever; it holds no resources and
// its status changes no further.
func IsTerminal(phase corev1.PodPhase) bool {
	return phase == corev1.PodSucceeded || phase == corev1.PodFailed
}
