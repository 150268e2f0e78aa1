package agent

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// staticPods handles the pods of the file and HTTP sources. They are
// admitted by their sysctls, OS and node selector, and host ports (a pod whose port another
// holds is held back until readmit admits it), kept in the checkpoint,
// and one that completed before a restart never runs again.
type staticPods struct {
	l       *syncLoop
	notices podNotices
}

func (s *staticPods) add(pod *corev1.Pod)    { s.upsert(pod, podworkers.Create) }
func (s *staticPods) change(pod *corev1.Pod) { s.upsert(pod, podworkers.Update) }

// upsert records a new or changed pod and hands it to its worker; a pod
// whose deletion was requested is killed instead.
func (s *staticPods) upsert(pod *corev1.Pod, typ podworkers.UpdateType) {
	l := s.l
	if pod.DeletionTimestamp != nil {
		if l.admission.Drop(pod.UID) {
			return // deleted before it ever ran
		}
	} else if !s.admit(pod) {
		return
	}
	s.notices.accepted(pod)
	if pod.DeletionTimestamp != nil {
		l.kill(pod)
		return
	}
	if final := l.ckpt.FinalStatus(pod.UID); final != nil {
		// It completed before a restart of the agent: its worker gets it
		// with its final status, which it takes for a termination, so the
		// UID never runs again; leftovers from before are cleaned up.
		done := pod.DeepCopy()
		done.Status = *final
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: done, Kill: &podworkers.KillPodOptions{MayBeRunning: true}})
		return
	}
	l.update(podworkers.UpdatePodOptions{Type: typ, Pod: pod})
}

func (s *staticPods) delete(pod *corev1.Pod) {
	if s.l.admission.Drop(pod.UID) {
		return // it never ran
	}
	s.notices.ending(pod)
	s.l.kill(pod)
}

func (s *staticPods) remove(pod *corev1.Pod) {
	if s.l.admission.Drop(pod.UID) {
		return // it never ran
	}
	s.notices.removed(pod)
	s.l.kill(pod)
}

func (s *staticPods) reconcile(pod *corev1.Pod) {
	s.l.pods.UpdatePod(pod)
	s.l.reconcileReadiness(pod)
}

// admit lets a pod a source added or changed run unless one of its host
// ports is held by another pod (admission.HostPorts). A pod held back is
// not indexed and gets no worker; its status says why, and the local API
// lists it. readmit admits it once its ports are free.
//
// A pod setting a sysctl the node does not allow, or whose OS, node
// selector or required node affinity the node does not match
// (admission.AdmitStatic), is refused for good, as an API pod is (see
// refuse): it ends Failed with the kubelet's reason (SysctlForbidden,
// NodeAffinity, ...) until its manifest changes.
func (s *staticPods) admit(pod *corev1.Pod) bool {
	l := s.l
	if _, known := l.pods.PodByUID(pod.UID); !known {
		res := l.sysctls.Admit(pod)
		if res.Reason == "" {
			res = admission.AdmitStatic(pod, l.nodeForStatic())
		}
		if res.Reason != "" {
			l.refuse(pod, res, s.notices)
			return false
		}
	}
	why, first := l.admission.Admit(pod)
	if why == "" {
		return true
	}
	if first {
		l.log.Info("Holding back a pod: host port conflict", "pod", podtypes.PodFullName(pod), "podUID", pod.UID, "detail", why)
		l.timeline.Record(pod.UID, timeline.KindError, "held back: %s", why)
	}
	l.statuses.Set(pod, corev1.PodStatus{Phase: corev1.PodPending, Reason: admission.ReasonHostPortConflict, Message: why})
	return false
}

// nodeForStatic is the node a static pod is admitted against: the Node
// when connected mode knows it, else one with the labels the agent
// registers it with, so that static pods are admitted alike while the
// apiserver is away or in standalone mode.
func (l *syncLoop) nodeForStatic() *corev1.Node {
	if node := l.waiting.Node(); node != nil {
		return node
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: l.nodeLabels}}
}
