package agent

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// apiPods handles the pods bound to this node through the apiserver. One
// is admitted once, after the Node is known (admitAPIPod); one that
// ended before (under an earlier run of the agent, or another node's)
// never runs again and keeps its status; one gone from the apiserver
// before the agent deleted it was force-deleted, and stops at once.
type apiPods struct {
	l       *syncLoop
	notices podNotices
}

func (a *apiPods) add(pod *corev1.Pod)    { a.upsert(pod, podworkers.Create) }
func (a *apiPods) change(pod *corev1.Pod) { a.upsert(pod, podworkers.Update) }

// upsert records a new or changed pod and hands it to its worker; a pod
// whose deletion was requested is killed instead.
func (a *apiPods) upsert(pod *corev1.Pod, typ podworkers.UpdateType) {
	l := a.l
	ended := podtypes.IsTerminal(pod.Status.Phase)
	if pod.DeletionTimestamp != nil {
		l.waiting.Drop(pod.UID)
	}
	if ended && l.statuses.Status(pod.UID) == nil {
		// It ended before (under an earlier run of the agent): its
		// status stays as it is, also if its deletion was asked.
		l.statuses.Set(pod, pod.Status)
	}
	if pod.DeletionTimestamp != nil {
		// It goes on even if it never ran, to be deleted from the apiserver.
		l.admission.Drop(pod.UID)
	} else if !a.admit(pod) {
		return
	}
	a.notices.accepted(pod)
	if pod.DeletionTimestamp != nil {
		l.kill(pod)
		return
	}
	if ended && !l.workers.IsPodTerminationRequested(pod.UID) {
		// It ended before: it never runs again, and its status stays as
		// it is.
		final := pod.Status
		keep := func(st *corev1.PodStatus) { st.Phase, st.Reason, st.Message = final.Phase, final.Reason, final.Message }
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Kill, Pod: pod, Kill: &podworkers.KillPodOptions{MayBeRunning: true, StatusFunc: keep}})
		return
	}
	l.resize(pod)
	l.update(podworkers.UpdatePodOptions{Type: typ, Pod: pod})
}

// admit admits a pod seen for the first time (admitAPIPod); one admitted
// or refused once, or that ended before, is not admitted again.
func (a *apiPods) admit(pod *corev1.Pod) bool {
	if _, known := a.l.pods.PodByUID(pod.UID); known || podtypes.IsTerminal(pod.Status.Phase) {
		return true
	}
	return a.l.admitAPIPod(pod, a.notices)
}

func (a *apiPods) delete(pod *corev1.Pod) {
	a.l.waiting.Drop(pod.UID)
	a.l.admission.Drop(pod.UID) // it goes on, to be deleted from the apiserver
	a.notices.ending(pod)
	a.l.kill(pod)
}

// remove stops a pod gone from the apiserver before this agent deleted
// it: it was force-deleted, and stops at once.
func (a *apiPods) remove(pod *corev1.Pod) {
	if a.l.admission.Drop(pod.UID) || a.l.waiting.Drop(pod.UID) {
		return // it never ran
	}
	a.notices.removed(pod)
	noGrace := int64(0)
	a.l.killWith(pod, &noGrace)
}

func (a *apiPods) reconcile(pod *corev1.Pod) {
	if _, known := a.l.pods.PodByUID(pod.UID); !known {
		// Not admitted yet (it waits for the Node): indexing it would have
		// housekeeping start it.
		a.l.waiting.Update(pod)
		return
	}
	a.l.pods.UpdatePod(pod)
	a.l.reconcileReadiness(pod)
}

// admitAPIPod decides whether an API pod seen for the first time may run,
// once the Node is known (admission.Waiting holds it until then);
// a refused one is indexed (n), so that its Failed status is written, and
// handed to its worker as a pod that ended.
func (l *syncLoop) admitAPIPod(pod *corev1.Pod, n podNotices) bool {
	node := l.waiting.Node()
	if node == nil {
		if l.waiting.Hold(pod) {
			l.log.Info("Holding a pod from the apiserver until the Node is known", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
		}
		return false
	}
	l.waiting.Drop(pod.UID)
	// A pod that was admitted before the agent restarted holds what it
	// was allocated, which a resize pending since may exceed.
	res := admission.AdmitAPIPod(l.alloc.Apply(pod), node, l.activePods(), l.sysctls, l.admission)
	if res.Reason == "" {
		return true
	}
	l.refuse(pod, res, n)
	return false
}

// activePods are the pods admitted so far that may still run, with the
// phase the agent knows of them, for the resources they hold: those they
// were allocated.
func (l *syncLoop) activePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range l.pods.Pods() {
		if podtypes.IsMirrorPod(pod) {
			continue
		}
		if st := l.statuses.Status(pod.UID); st != nil && podtypes.IsTerminal(st.Phase) {
			continue
		}
		out = append(out, l.alloc.Apply(pod))
	}
	return out
}

// retryWaiting admits the pods that came before the Node was known, the
// oldest first.
func (l *syncLoop) retryWaiting() {
	for _, pod := range l.waiting.Held() {
		l.handlers.api.add(pod)
	}
}
