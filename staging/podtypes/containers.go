package podtypes

import corev1 "k8s.io/api/core/v1"

// Containers lists every container of the pod spec, in the order the
// kubelet knows them: init containers (sidecars among them), app
// containers, then ephemeral containers, whose common fields are a
// Container's (the fields an ephemeral container may not set are empty).
func Containers(spec *corev1.PodSpec) []*corev1.Container {
	out := make([]*corev1.Container, 0, len(spec.InitContainers)+len(spec.Containers)+len(spec.EphemeralContainers))
	for i := range spec.InitContainers {
		out = append(out, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		out = append(out, EphemeralContainer(&spec.EphemeralContainers[i]))
	}
	return out
}

// EphemeralContainer is an ephemeral container's spec as a Container.
func EphemeralContainer(ec *corev1.EphemeralContainer) *corev1.Container {
	return (*corev1.Container)(&ec.EphemeralContainerCommon)
}
