package agent

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// resize keeps an API pod's allocation (allocation.Store): recorded at its
// first sight, then moved to what its spec asks once the node can give it
// (admission.AdmitResize); until then the resize is pending, and the pod
// runs with what it was allocated (the syncer applies the allocation). A
// static pod is never resized: its manifest's change is a new pod.
func (l *syncLoop) resize(pod *corev1.Pod) {
	log := l.log.WithValues("pod", podtypes.PodFullName(pod), "podUID", pod.UID)
	if !l.alloc.Known(pod.UID) {
		if err := l.alloc.Allocate(pod); err != nil {
			log.Error(err, "Recording the pod's allocated resources")
		}
		return
	}
	app, init := l.alloc.Changed(pod)
	if len(app) == 0 && len(init) == 0 {
		l.alloc.SetPending(pod.UID, allocation.Pending{}) // a resize reverted
		return
	}
	res := admission.Result{Reason: admission.ReasonResizeDeferred, Message: "the Node is not known yet"}
	if node := l.waiting.Node(); node != nil {
		res = admission.AdmitResize(pod, node, l.activePods(), init)
	}
	if res.Reason != "" {
		pending := allocation.Pending{Reason: res.Reason, Message: res.Message}
		if l.alloc.Pending(pod.UID) != pending {
			log.Info("A resize of the pod waits", "reason", res.Reason, "message", res.Message)
			l.timeline.Record(pod.UID, timeline.KindWorker, "resize %s: %s", res.Reason, res.Message)
		}
		l.alloc.SetPending(pod.UID, pending)
		return
	}
	if err := l.alloc.Allocate(pod); err != nil {
		// Not remembered: a restarted agent decides it again.
		log.Error(err, "Recording the pod's allocated resources")
	}
	l.alloc.SetPending(pod.UID, allocation.Pending{})
	log.Info("Resizing the pod", "containers", app, "generation", pod.Generation)
	l.timeline.Record(pod.UID, timeline.KindWorker, "resize accepted (generation %d): %v", pod.Generation, app)
}

// retryDeferred tries again the deferred resizes, the oldest pod first,
// once pods have stopped, and at each housekeeping: what the others hold
// may leave room now.
func (l *syncLoop) retryDeferred() {
	var deferred []*corev1.Pod
	for _, pod := range l.pods.Pods() {
		if l.alloc.Pending(pod.UID).Reason == admission.ReasonResizeDeferred {
			deferred = append(deferred, pod)
		}
	}
	slices.SortStableFunc(deferred, func(a, b *corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for _, pod := range deferred {
		l.resize(pod)
		if l.alloc.Pending(pod.UID).Reason == "" {
			l.update(podworkers.UpdatePodOptions{Type: podworkers.Update, Pod: pod})
		}
	}
}
