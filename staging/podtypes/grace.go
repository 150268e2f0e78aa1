package podtypes

import corev1 "k8s.io/api/core/v1"

// GracePeriod is the grace period a pod is stopped with when nothing
// shortens it: its deletion's, else its spec's, else the API default (30
// s). A negative value counts as 0.
func GracePeriod(pod *corev1.Pod) int64 {
	g := int64(corev1.DefaultTerminationGracePeriodSeconds)
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		g = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	return max(g, 0)
}
