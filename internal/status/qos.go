package status

import (
	corev1 "k8s.io/api/core/v1"
)

// qosClass is the pod's quality of service class, from its containers'
// requests and limits for CPU and memory: BestEffort when none sets any,
// Guaranteed when every container limits both and requests what it limits,
// Burstable otherwise.
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	any, guaranteed := false, true
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				any = true
			}
			if !hasLim || lim.IsZero() || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
