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

// handleUpdate applies one config update: it decides each pod's kind once
// and hands the pod to that kind's handler (updates_static.go,
// updates_mirror.go, updates_api.go), which indexes it, tells the parts
// that follow the pods (podNotices) and its worker:
//
//	ADD        index, start (a static pod waits for an older one of its name)
//	UPDATE     index, sync with the new spec (a deletion timestamp kills)
//	DELETE     index, kill with the pod's deletion grace period
//	REMOVE     unindex, kill
//	RECONCILE  index (only the status changed); sync when a readiness
//	           gate's condition changed, for the pod's Ready
//
// A mirror pod never runs: it only updates the apiserver's view.
//
// The merger, in its incremental mode, has already turned every full set a
// source sent into these; a SET here is a wiring error, logged and dropped.
func (l *syncLoop) handleUpdate(u podtypes.PodUpdate) {
	for _, pod := range u.Pods {
		l.timeline.Record(pod.UID, timeline.KindSeen, "%s from %s", u.Op, u.Source)
	}
	l.log.V(2).Info("Config update", "op", u.Op, "source", u.Source, "pods", len(u.Pods))
	var apply func(podHandler, *corev1.Pod)
	switch u.Op {
	case podtypes.ADD:
		apply = podHandler.add
	case podtypes.UPDATE:
		apply = podHandler.change
	case podtypes.DELETE:
		apply = podHandler.delete
	case podtypes.REMOVE:
		apply = podHandler.remove
	case podtypes.RECONCILE:
		apply = podHandler.reconcile
	default:
		l.log.Error(nil, "Config update dropped: the agent takes incremental updates only", "op", u.Op, "source", u.Source)
		return
	}
	for _, pod := range u.Pods {
		apply(l.handlers.of(kindOf(pod)), pod)
	}
}

// podKind is what a pod is to the update handler.
type podKind int

const (
	// kindStatic: from a file or an HTTP source, run here.
	kindStatic podKind = iota
	// kindMirror: the apiserver's view of a static pod; never run.
	kindMirror
	// kindAPI: bound to this node through the apiserver, run here.
	kindAPI
)

func kindOf(pod *corev1.Pod) podKind {
	switch {
	case podtypes.IsMirrorPod(pod):
		return kindMirror
	case podtypes.IsStaticPod(pod):
		return kindStatic
	default:
		return kindAPI
	}
}

// podHandler applies the config updates of one kind of pod.
type podHandler interface {
	add(*corev1.Pod)
	change(*corev1.Pod)
	// delete: its deletion was asked (it may still have to stop).
	delete(*corev1.Pod)
	// remove: its source no longer has it.
	remove(*corev1.Pod)
	// reconcile: only its status changed.
	reconcile(*corev1.Pod)
}

// podHandlers are the handlers of the three kinds.
type podHandlers struct {
	static *staticPods
	mirror *mirrorPods
	api    *apiPods
}

// newPodHandlers builds the handlers of l's update path; each kind tells
// only the parts that follow pods of its kind.
func newPodHandlers(l *syncLoop) podHandlers {
	apiListeners := []podListener{apiSync{l.api}}
	if l.objects != nil {
		apiListeners = append(apiListeners, objectsListener{objects: l.objects, workers: l.workers})
	}
	return podHandlers{
		static: &staticPods{l: l, notices: podNotices{pods: l.pods, listeners: []podListener{checkpointListener{l.ckpt}, staticSync{l.api}}}},
		mirror: &mirrorPods{l: l, notices: podNotices{pods: l.pods, listeners: []podListener{mirrorSync{l.api}}}},
		api:    &apiPods{l: l, notices: podNotices{pods: l.pods, listeners: apiListeners}},
	}
}

func (h podHandlers) of(k podKind) podHandler {
	switch k {
	case kindStatic:
		return h.static
	case kindMirror:
		return h.mirror
	default:
		return h.api
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

// readmit frees the host ports of pods that have stopped, then admits the
// held-back pods whose ports are free, the longest waiting first, and the
// API pods that waited for the Node.
func (l *syncLoop) readmit() {
	l.admission.Release(func(uid types.UID) bool {
		_, desired := l.pods.PodByUID(uid)
		return desired || l.workers.CouldHaveRunningContainers(uid)
	})
	l.retryWaiting()
	l.retryDeferred()
	// Only static pods are held back: an API pod whose port is held is
	// refused (admission.AdmitAPIPod).
	for _, pod := range l.admission.Held() {
		if why, _ := l.admission.Admit(pod); why == "" {
			l.log.Info("Admitting a pod whose host ports are free now", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
			l.timeline.Record(pod.UID, timeline.KindWorker, "admitted: its host ports are free now")
			l.handlers.static.add(pod)
		}
	}
}

// refuse ends a pod that may not run: Failed with the admission's reason.
// n are the notices of the pod's kind.
func (l *syncLoop) refuse(pod *corev1.Pod, res admission.Result, n podNotices) {
	l.log.Info("Refusing a pod", "pod", podtypes.PodFullName(pod), "podUID", pod.UID, "reason", res.Reason, "message", res.Message)
	l.timeline.Record(pod.UID, timeline.KindError, "refused: %s: %s", res.Reason, res.Message)
	l.podEvents.refused(pod, res.Reason, res.Message)
	failed := corev1.PodStatus{Phase: corev1.PodFailed, Reason: res.Reason, Message: res.Message}
	l.statuses.Set(pod, failed)
	n.ending(pod)
	keep := func(st *corev1.PodStatus) {
		st.Phase, st.Reason, st.Message = failed.Phase, failed.Reason, failed.Message
	}
	l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: pod, Kill: &podworkers.KillPodOptions{StatusFunc: keep}})
}
