package podtypes

import (
	corev1 "k8s.io/api/core/v1"
)

// QOSClass is the pod's quality of service class. The class is fixed
// when the pod is admitted, so a class already in the pod's status wins;
// otherwise it follows from the containers' (init containers included)
// CPU and memory: BestEffort when none requests or limits either,
// Guaranteed when every container limits both and requests exactly what
// it limits (a request left out is the limit), Burstable otherwise.
//
// The status, the pod's cgroup and its containers' OOM score adjustment
// all take the class from here.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if c := pod.Status.QOSClass; c != "" {
		return c
	}
	anySet, guaranteed := false, true
	check := func(cs []corev1.Container) {
		for i := range cs {
			res := &cs[i].Resources
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := res.Requests[name]
				lim, hasLim := res.Limits[name]
				if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
					anySet = true
				}
				if !hasLim || lim.IsZero() || (hasReq && req.Cmp(lim) != 0) {
					guaranteed = false
				}
			}
		}
	}
	check(pod.Spec.InitContainers)
	check(pod.Spec.Containers)
	switch {
	case !anySet:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
