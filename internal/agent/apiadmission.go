package agent

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// apiAdmission holds the pods bound to this node through the apiserver
// that came before the Node was known: they are admitted
// (admission.AdmitAPIPod) once it is (see retryWaiting). A refused pod
// never runs: it ends Failed with the kubelet's reason and message, and an
// event says why.
//
// The sync loop's goroutine owns it.
type apiAdmission struct {
	// node is set once connected mode runs; nil until then.
	node atomic.Pointer[mirror.NodeGetter]
	// waiting are the pods that came before the Node was known.
	waiting map[types.UID]*corev1.Pod
}

// admitAPIPod decides whether an API pod seen for the first time may run;
// a refused one is indexed (n), so that its Failed status is written, and
// handed to its worker as a pod that ended.
func (l *syncLoop) admitAPIPod(pod *corev1.Pod, n podNotices) bool {
	node := l.apiNode()
	if node == nil {
		if _, ok := l.apiAdmission.waiting[pod.UID]; !ok {
			l.log.Info("Holding a pod from the apiserver until the Node is known", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
		}
		l.apiAdmission.waiting[pod.UID] = pod
		return false
	}
	delete(l.apiAdmission.waiting, pod.UID)
	// A pod that was admitted before the agent restarted holds what it
	// was allocated, which a resize pending since may exceed.
	res := admission.AdmitAPIPod(l.alloc.Apply(pod), node, l.activePods(), l.sysctls, l.admission)
	if res.Reason == "" {
		return true
	}
	l.refuse(pod, res, n)
	return false
}

// apiNode is the Node, once connected mode runs and it is known; else nil.
func (l *syncLoop) apiNode() *corev1.Node {
	if get := l.apiAdmission.node.Load(); get != nil {
		node, _ := (*get).Node(context.Background())
		return node
	}
	return nil
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
// oldest first, as the kubelet admits pods in their creation order.
func (l *syncLoop) retryWaiting() {
	pods := slices.Collect(maps.Values(l.apiAdmission.waiting))
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.UID, b.UID))
	})
	for _, pod := range pods {
		l.handlers.api.add(pod)
	}
}

// update keeps the newest version of a waiting pod.
func (a *apiAdmission) update(pod *corev1.Pod) {
	if _, ok := a.waiting[pod.UID]; ok {
		a.waiting[pod.UID] = pod
	}
}

// isWaiting reports whether the pod waits for the Node: housekeeping must
// not take its containers, from before a restart, for orphans.
func (a *apiAdmission) isWaiting(uid types.UID) bool {
	_, ok := a.waiting[uid]
	return ok
}

// dropWaiting forgets a pod that was waiting for the Node; it reports
// whether it was.
func (a *apiAdmission) dropWaiting(uid types.UID) bool {
	_, ok := a.waiting[uid]
	delete(a.waiting, uid)
	return ok
}

func (e *podEvents) refused(pod *corev1.Pod, reason, message string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Event(e.ref(pod), corev1.EventTypeWarning, reason, fmt.Sprintf("Pod was rejected: %s", message))
}
