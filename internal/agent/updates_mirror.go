package agent

import (
	corev1 "k8s.io/api/core/v1"
)

// mirrorPods handles the mirror pods the apiserver source sends: the
// apiserver's view of the static pods, which API sync keeps. They are
// indexed and API sync hears of them; nothing runs or stops for them.
type mirrorPods struct {
	l       *syncLoop
	notices podNotices
}

func (m *mirrorPods) add(pod *corev1.Pod)    { m.notices.accepted(pod) }
func (m *mirrorPods) change(pod *corev1.Pod) { m.notices.accepted(pod) }
func (m *mirrorPods) delete(pod *corev1.Pod) { m.notices.ending(pod) }
func (m *mirrorPods) remove(pod *corev1.Pod) { m.notices.removed(pod) }

// reconcile indexes the new status; a mirror has no readiness of its own
// to sync (the status store holds its static pod's).
func (m *mirrorPods) reconcile(pod *corev1.Pod) { m.l.pods.UpdatePod(pod) }
