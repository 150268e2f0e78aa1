package status

import (
	corev1 "k8s.io/api/core/v1"
)

// MaxPodTerminationMessages bounds the termination messages of one pod's
// containers together, as the kubelet's: each container's terminated
// states carry at most this over the number of the pod's containers (init
// and ephemeral ones included). A container's own message is at most
// 4 KiB (internal/runtime).
const MaxPodTerminationMessages = 12 * 1024

// limitTerminationMessages cuts each terminated state's message to the
// container's share, keeping its start, as the kubelet does.
func limitTerminationMessages(pod *corev1.Pod, st *corev1.PodStatus) {
	share := MaxPodTerminationMessages
	if n := len(pod.Spec.InitContainers) + len(pod.Spec.Containers) + len(pod.Spec.EphemeralContainers); n > 0 {
		share /= n
	}
	limit := func(s *corev1.ContainerState) {
		if t := s.Terminated; t != nil && len(t.Message) > share {
			t.Message = t.Message[:share]
		}
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			limit(&list[i].State)
			limit(&list[i].LastTerminationState)
		}
	}
}
