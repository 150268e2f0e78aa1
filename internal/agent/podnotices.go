package agent

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podNotices is how one kind's handler records a pod in the pod manager
// and tells the parts that follow pods of that kind (its listeners), at
// one place for each of:
//
//	accepted  a source added or changed the pod and it was admitted (its
//	          deletion may be asked): the version to run, or to stop
//	ending    the pod is to stop without having been accepted in this
//	          version: its deletion was asked (DELETE), or it was refused
//	removed   its source no longer has it
//
// A status change alone (RECONCILE) is indexed only.
type podNotices struct {
	pods      *podmanager.Manager
	listeners []podListener
}

type podListener interface {
	accepted(*corev1.Pod)
	ending(*corev1.Pod)
	removed(*corev1.Pod)
}

func (n podNotices) accepted(pod *corev1.Pod) {
	n.pods.UpdatePod(pod) // AddPod is the same operation
	for _, l := range n.listeners {
		l.accepted(pod)
	}
}

func (n podNotices) ending(pod *corev1.Pod) {
	n.pods.UpdatePod(pod)
	for _, l := range n.listeners {
		l.ending(pod)
	}
}

func (n podNotices) removed(pod *corev1.Pod) {
	n.pods.RemovePod(pod)
	for _, l := range n.listeners {
		l.removed(pod)
	}
}

// checkpointListener keeps the static pods in the checkpoint.
type checkpointListener struct{ ckpt loopCheckpoint }

func (c checkpointListener) accepted(pod *corev1.Pod) { c.ckpt.Accepted(pod) }
func (c checkpointListener) ending(*corev1.Pod)       {}

// removed forgets a completed pod now: it has nothing left to terminate,
// and its manifest put back runs it afresh, as any re-added pod.
func (c checkpointListener) removed(pod *corev1.Pod) { c.ckpt.ForgetCompleted(pod.UID) }

// API sync (mirror pods, statuses) hears of every pod, through the
// methods of its kind: staticSync, mirrorSync and apiSync.
type (
	staticSync struct{ api loopAPISync }
	mirrorSync struct{ api loopAPISync }
	apiSync    struct{ api loopAPISync }
)

func (a staticSync) accepted(pod *corev1.Pod) { a.api.StaticPodChanged(pod) }
func (a staticSync) ending(pod *corev1.Pod)   { a.api.StaticPodChanged(pod) }
func (a staticSync) removed(pod *corev1.Pod)  { a.api.StaticPodRemoved(pod) }
func (a mirrorSync) accepted(pod *corev1.Pod) { a.api.MirrorPodChanged(pod) }
func (a mirrorSync) ending(pod *corev1.Pod)   { a.api.MirrorPodChanged(pod) }
func (a mirrorSync) removed(pod *corev1.Pod)  { a.api.MirrorPodRemoved(pod) }
func (a apiSync) accepted(pod *corev1.Pod)    { a.api.APIPodChanged(pod) }
func (a apiSync) ending(pod *corev1.Pod)      { a.api.APIPodChanged(pod) }
func (a apiSync) removed(pod *corev1.Pod)     { a.api.APIPodRemoved(pod) }

// objectsListener has the ConfigMaps and Secrets of the API pods read.
type objectsListener struct {
	objects PodObjects
	workers loopWorkers
}

// accepted registers a pod that may still run: one that ends reads
// nothing more (the workers unregister it once it has).
func (o objectsListener) accepted(pod *corev1.Pod) {
	if !podtypes.IsTerminal(pod.Status.Phase) && !o.workers.IsPodTerminationRequested(pod.UID) {
		o.objects.RegisterPod(pod)
	}
}

func (o objectsListener) ending(*corev1.Pod)      {}
func (o objectsListener) removed(pod *corev1.Pod) { o.objects.UnregisterPod(pod) }

// PodObjects is told which API pods exist, so that the ConfigMaps and
// Secrets they reference are read, and watched, for them;
// *podobjects.Objects satisfies it.
type PodObjects interface {
	RegisterPod(*corev1.Pod)
	UnregisterPod(*corev1.Pod)
}
