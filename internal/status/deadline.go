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
// from st's start time, passes; false if it has no deadline or st no
// start time. The deadline may change (the apiserver lets it be set or
// lowered on a running pod): it is read from the pod each time.
func ActiveDeadline(pod *corev1.Pod, st *corev1.PodStatus) (time.Time, bool) {
	if pod.Spec.ActiveDeadlineSeconds == nil || st == nil || st.StartTime == nil {
		return time.Time{}, false
	}
	return st.StartTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second), true
}

// PastActiveDeadline reports whether the pod, with the status st, has been
// active for its spec.activeDeadlineSeconds or longer at now.
func PastActiveDeadline(pod *corev1.Pod, st *corev1.PodStatus, now time.Time) bool {
	at, ok := ActiveDeadline(pod, st)
	return ok && !now.Before(at)
}
