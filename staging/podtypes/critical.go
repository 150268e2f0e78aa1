package podtypes

import corev1 "k8s.io/api/core/v1"

// systemCriticalPriority is system-cluster-critical's priority, from which
// on the kubelet counts a pod as critical.
const systemCriticalPriority = 2_000_000_000

// IsCritical is the kubelet's notion of a pod the node itself needs:
// static and mirror pods, and those of system-cluster-critical priority
// or more. A resource shortfall never refuses them, nor does the node
// evict them.
func IsCritical(pod *corev1.Pod) bool {
	return IsStaticPod(pod) || IsMirrorPod(pod) ||
		(pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority)
}
