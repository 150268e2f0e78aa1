package statusmanager

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// normalize returns a copy of st with every time at the precision the API
// keeps (whole seconds): written as is, a status read back would differ
// from the one written, and be written again at every resync.
func normalize(st corev1.PodStatus) *corev1.PodStatus {
	out := st.DeepCopy()
	truncate(out.StartTime)
	for i := range out.Conditions {
		truncate(&out.Conditions[i].LastProbeTime)
		truncate(&out.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]corev1.ContainerStatus{out.InitContainerStatuses, out.ContainerStatuses, out.EphemeralContainerStatuses} {
		for i := range list {
			truncateState(&list[i].State)
			truncateState(&list[i].LastTerminationState)
		}
	}
	return out
}

func truncateState(s *corev1.ContainerState) {
	if s.Running != nil {
		truncate(&s.Running.StartedAt)
	}
	if s.Terminated != nil {
		truncate(&s.Terminated.StartedAt)
		truncate(&s.Terminated.FinishedAt)
	}
}

func truncate(t *metav1.Time) {
	if t != nil && !t.IsZero() {
		*t = metav1.NewTime(t.Rfc3339Copy().Time)
	}
}
