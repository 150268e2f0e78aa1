package status

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The status of a pod that outlived its spec.activeDeadlineSeconds, as the
// kubelet words it.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// ActiveDeadline returns when the pod's spec.activeDeadlineSeconds, counted
// from its start time, passes: st's (st may be nil), else that of the
// apiserver's status of the pod, as Generate takes it. False if it has no
// deadline or no start time yet. The deadline may change (the apiserver
// lets it be set or lowered on a running pod): it is read from the pod
// each time.
func ActiveDeadline(pod *corev1.Pod, st *corev1.PodStatus) (time.Time, bool) {
	start := pod.Status.StartTime
	if st != nil && st.StartTime != nil {
		start = st.StartTime
	}
	if pod.Spec.ActiveDeadlineSeconds == nil || start == nil {
		return time.Time{}, false
	}
	return start.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second), true
}

// PastActiveDeadline reports whether the pod, with the status st (or nil),
// has been active for its spec.activeDeadlineSeconds or longer at now.
func PastActiveDeadline(pod *corev1.Pod, st *corev1.PodStatus, now time.Time) bool {
	at, ok := ActiveDeadline(pod, st)
	return ok && !now.Before(at)
}
