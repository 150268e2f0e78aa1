package runtime

import (
	corev1 "k8s.io/api/core/v1"
)

// planEphemeral plans the ephemeral containers (kubectl debug) of a pod
// whose sandbox is usable: each starts once, as soon as it is in the spec,
// whether or not initialization is complete, and never restarts. One that
// targets a container joins that container's process namespace, which
// must run.
func planEphemeral(p *plan, pod *corev1.Pod, status *PodStatus) {
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		if status.LatestContainer(ec.Name) != nil {
			continue
		}
		s := startStep{Ephemeral: true, Index: i, Name: ec.Name, Reason: "ephemeral container added"}
		if ec.TargetContainerName != "" {
			if t := status.LatestContainer(ec.TargetContainerName); t != nil && t.State == ContainerStateRunning {
				s.TargetID = t.ID
			} else {
				s.TargetMissing = true
			}
		}
		p.Start = append(p.Start, s)
	}
}
