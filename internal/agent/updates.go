package agent

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// handleUpdate applies one config update to the pod manager and hands the
// pods to their workers:
//
//	ADD        index, checkpoint, start (a static pod waits for an older one of its name)
//	UPDATE     index, checkpoint, sync with the new spec (a deletion timestamp kills)
//	DELETE     index, kill with the pod's deletion grace period
//	REMOVE     unindex, kill
//	RECONCILE  index (only the status changed); sync when a readiness
//	           gate's condition changed, for the pod's Ready
//
// The merger, in its incremental mode, has already turned every full set a
// source sent into these; a SET here is a wiring error, logged and dropped.
func (l *syncLoop) handleUpdate(u podtypes.PodUpdate) {
	for _, pod := range u.Pods {
		l.timeline.Record(pod.UID, timeline.KindSeen, "%s from %s", u.Op, u.Source)
	}
	l.log.V(2).Info("Config update", "op", u.Op, "source", u.Source, "pods", len(u.Pods))
	switch u.Op {
	case podtypes.ADD:
		for _, pod := range u.Pods {
			l.add(pod)
		}
	case podtypes.UPDATE:
		for _, pod := range u.Pods {
			l.change(pod)
		}
	case podtypes.DELETE:
		for _, pod := range u.Pods {
			l.apiAdmission.dropWaiting(pod.UID)
			if l.admission.Drop(pod.UID) && !isAPIPod(pod) {
				continue // it never ran
			}
			l.pods.UpdatePod(pod)
			l.api.PodChanged(pod)
			if !podtypes.IsMirrorPod(pod) {
				l.kill(pod)
			}
		}
	case podtypes.REMOVE:
		for _, pod := range u.Pods {
			l.remove(pod)
		}
	case podtypes.RECONCILE:
		for _, pod := range u.Pods {
			if _, known := l.pods.PodByUID(pod.UID); isAPIPod(pod) && !known {
				// Not admitted yet (it waits for the Node): indexing it
				// would have housekeeping start it.
				l.apiAdmission.update(pod)
				continue
			}
			l.pods.UpdatePod(pod)
			l.reconcileReadiness(pod)
		}
	default:
		l.log.Error(nil, "Config update dropped: the agent takes incremental updates only", "op", u.Op, "source", u.Source)
	}
}

// reconcileReadiness syncs a running pod whose readiness gates' conditions
// others changed in the apiserver: its Ready condition depends on them.
func (l *syncLoop) reconcileReadiness(pod *corev1.Pod) {
	if len(pod.Spec.ReadinessGates) == 0 || l.workers.IsPodTerminationRequested(pod.UID) {
		return
	}
	if last := l.statuses.Status(pod.UID); last != nil && status.GateConditionsDiffer(pod, last) {
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
	}
}

func (l *syncLoop) add(pod *corev1.Pod)    { l.upsert(pod, podworkers.Create) }
func (l *syncLoop) change(pod *corev1.Pod) { l.upsert(pod, podworkers.Update) }

// upsert records a new or changed pod and hands it to its worker: a mirror
// only updates its static pod's view, and a pod whose deletion was
// requested is killed instead.
func (l *syncLoop) upsert(pod *corev1.Pod, typ podworkers.UpdateType) {
	if !podtypes.IsMirrorPod(pod) {
		if pod.DeletionTimestamp != nil {
			l.apiAdmission.dropWaiting(pod.UID)
		}
		if isAPIPod(pod) && podtypes.IsTerminal(pod.Status.Phase) && l.statuses.Status(pod.UID) == nil {
			// It ended before (under an earlier run of the agent): its
			// status stays as it is, also if its deletion was asked.
			l.statuses.Set(pod, pod.Status)
		}
		if pod.DeletionTimestamp != nil && l.admission.Drop(pod.UID) && !isAPIPod(pod) {
			return // deleted before it ever ran (an API pod goes on, to be deleted from the apiserver)
		}
		if pod.DeletionTimestamp == nil && !l.admit(pod) {
			return
		}
	}
	l.pods.UpdatePod(pod) // AddPod is the same operation
	l.ckpt.Accepted(pod)
	l.api.PodChanged(pod)
	if podtypes.IsMirrorPod(pod) {
		return // the apiserver's view only: apisync keeps it
	}
	if isAPIPod(pod) && l.objects != nil && !podtypes.IsTerminal(pod.Status.Phase) && !l.workers.IsPodTerminationRequested(pod.UID) {
		// A pod that ends reads nothing more (the workers unregister it
		// once it has).
		l.objects.RegisterPod(pod)
	}
	if pod.DeletionTimestamp != nil {
		l.kill(pod)
		return
	}
	if isAPIPod(pod) && podtypes.IsTerminal(pod.Status.Phase) && !l.workers.IsPodTerminationRequested(pod.UID) {
		// It ended before (under an earlier run of the agent, or another
		// node's): it never runs again, and its status stays as it is.
		final := pod.Status
		keep := func(st *corev1.PodStatus) { st.Phase, st.Reason, st.Message = final.Phase, final.Reason, final.Message }
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: pod, Kill: &podworkers.KillPodOptions{MayBeRunning: true, StatusFunc: keep}})
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

func (l *syncLoop) remove(pod *corev1.Pod) {
	if l.admission.Drop(pod.UID) || l.apiAdmission.dropWaiting(pod.UID) {
		return // it never ran
	}
	l.pods.RemovePod(pod)
	l.api.PodRemoved(pod)
	if podtypes.IsMirrorPod(pod) {
		return
	}
	if isAPIPod(pod) {
		if l.objects != nil {
			l.objects.UnregisterPod(pod)
		}
		// Gone from the apiserver before this agent deleted it: it was
		// force-deleted, and stops at once.
		noGrace := int64(0)
		l.killWith(pod, &noGrace)
		return
	}
	// A completed pod has nothing left to terminate: forget it now, so
	// that its manifest put back runs it afresh, as any re-added pod.
	l.ckpt.ForgetCompleted(pod.UID)
	l.kill(pod)
}

// isAPIPod reports whether the pod came from the apiserver to run here
// (not a static pod, nor a mirror).
func isAPIPod(pod *corev1.Pod) bool {
	return !podtypes.IsStaticPod(pod) && !podtypes.IsMirrorPod(pod)
}

// kill stops the pod; the workers take the shortest of the grace period in
// force, the pod's deletion grace period and its spec's.
func (l *syncLoop) kill(pod *corev1.Pod) { l.killWith(pod, pod.DeletionGracePeriodSeconds) }

// killWith stops the pod, giving it at most grace seconds, if not nil.
func (l *syncLoop) killWith(pod *corev1.Pod, grace *int64) {
	if l.ckpt.WasRestored(pod.UID) {
		// A restored pod may be running from before the restart, though its
		// worker has not started it yet: say so first, or the workers would
		// take a static pod killed before it started for one that never ran.
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, RuntimePod: &podworkers.RuntimePod{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}})
	}
	opts := &podworkers.KillPodOptions{GracePeriodOverride: grace}
	l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: pod, Kill: opts})
}

// admit lets a pod a source added or changed run unless one of its host
// ports is held by another pod (admission.HostPorts). A pod held back is not
// indexed and gets no worker; its status says why, and the local API
// lists it. readmit admits it once its ports are free.
//
// A static pod setting a sysctl the node does not allow is refused for
// good, as an API pod is (see refuse): it ends Failed with reason
// SysctlForbidden, as under the kubelet, until its manifest changes.
func (l *syncLoop) admit(pod *corev1.Pod) bool {
	if isAPIPod(pod) {
		if _, known := l.pods.PodByUID(pod.UID); known || podtypes.IsTerminal(pod.Status.Phase) {
			return true // admitted (or refused) once, or ended before
		}
		return l.admitAPIPod(pod)
	}
	if _, known := l.pods.PodByUID(pod.UID); !known {
		if res := l.sysctls.Admit(pod); res.Reason != "" {
			l.refuse(pod, res)
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

// readmit frees the host ports of pods that have stopped, then admits the
// held-back pods whose ports are free, the longest waiting first.
func (l *syncLoop) readmit() {
	l.admission.Release(func(uid types.UID) bool {
		_, desired := l.pods.PodByUID(uid)
		return desired || l.workers.CouldHaveRunningContainers(uid)
	})
	l.retryWaiting()
	for _, pod := range l.admission.Held() {
		if why, _ := l.admission.Admit(pod); why == "" {
			l.log.Info("Admitting a pod whose host ports are free now", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
			l.timeline.Record(pod.UID, timeline.KindWorker, "admitted: its host ports are free now")
			l.add(pod)
		}
	}
}
