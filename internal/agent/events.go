package agent

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The reasons of the pod events, as the kubelet names them.
const (
	eventCreated = "Created"
	eventStarted = "Started"
	eventKilling = "Killing"
	eventBackOff = "BackOff"
	eventFailed  = "Failed"
)

// podEvents records what happens to pods as Kubernetes events. A static
// pod's events go to its mirror pod, so that `kubectl describe` on the
// mirror shows them; the kubelet records them against the static pod's
// UID, which no API object carries. A nil recorder records nothing.
type podEvents struct {
	rec  record.EventRecorder
	pods *podmanager.Manager
}

func newPodEvents(rec record.EventRecorder, pods *podmanager.Manager) *podEvents {
	return &podEvents{rec: rec, pods: pods}
}

// ref is the object a pod's events are about.
func (e *podEvents) ref(pod *corev1.Pod) *corev1.ObjectReference {
	uid := pod.UID
	if podtypes.IsStaticPod(pod) {
		if m, ok := e.pods.MirrorPodByPod(pod); ok && podmanager.IsMirrorPodOf(m, pod) {
			uid = m.UID
		}
	}
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: uid}
}

// actions records the events of one runtime sync's actions.
func (e *podEvents) actions(pod *corev1.Pod, actions []runtime.Action) {
	if e == nil || e.rec == nil || len(actions) == 0 {
		return
	}
	ref := e.ref(pod)
	for _, a := range actions {
		switch a.Kind {
		case runtime.ActionStartContainer:
			switch {
			case a.Err == nil:
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventCreated, "Created container %s", a.Container)
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventStarted, "Started container %s", a.Container)
			case errors.Is(a.Err, runtime.ErrCrashLoopBackOff):
				e.rec.Eventf(ref, corev1.EventTypeWarning, eventBackOff, "Back-off restarting failed container %s", a.Container)
			default:
				e.rec.Eventf(ref, corev1.EventTypeWarning, eventFailed, "Error: %v", a.Err)
			}
		case runtime.ActionKillContainer:
			if a.Reason != "" {
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventKilling, "Stopping container %s: %s", a.Container, a.Reason)
			} else {
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventKilling, "Stopping container %s", a.Container)
			}
		case runtime.ActionCreateSandbox:
			if a.Err != nil {
				e.rec.Eventf(ref, corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", a.Err)
			}
		}
	}
}

// stopping records that the pod is being stopped.
func (e *podEvents) stopping(pod *corev1.Pod, grace int64) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeNormal, eventKilling, "Stopping the pod's containers (grace period %ds)", grace)
}
