package podtypes

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// QOSClass is the pod's quality of service class. The class is fixed
// when the pod is admitted, so a class already in the pod's status wins;
// otherwise it follows from the pod-level resources when the pod sets any
// (PodLevelResources: see podLevelQOSClass), else from the containers'
// (init containers included) CPU and memory: BestEffort when none
// requests or limits either, Guaranteed when every container limits both
// and requests exactly what it limits (a request left out is the limit),
// Burstable otherwise.
//
// The status, the pod's cgroup and its containers' OOM score adjustment
// all take the class from here.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if c := pod.Status.QOSClass; c != "" {
		return c
	}
	if HasPodLevelResources(pod) {
		return podLevelQOSClass(pod.Spec.Resources)
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

// HasPodLevelResources reports whether the pod sets a request or a limit
// of its own, at the pod level, for a resource the kubelet manages there
// (cpu, memory, hugepages-*): then those, not its containers' sums, are
// the pod's.
func HasPodLevelResources(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	if r == nil {
		return false
	}
	for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name := range l {
			if IsPodLevelResource(name) {
				return true
			}
		}
	}
	return false
}

// IsPodLevelResource reports whether a pod may set name at the pod level.
func IsPodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// podLevelQOSClass is the class of pod-level resources, as the kubelet
// takes it: for CPU and memory each, BestEffort when neither a request
// nor a limit is set, Guaranteed when both are and equal, Burstable
// otherwise; the pod is Guaranteed or BestEffort only if both resources
// are, Burstable otherwise. A request is not defaulted from the limit here:
// the apiserver does that for the pods it stores, and the kubelet does
// not for static pods.
func podLevelQOSClass(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	var class corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if class != "" && class != c {
			return corev1.PodQOSBurstable
		}
		class = c
	}
	return class
}
