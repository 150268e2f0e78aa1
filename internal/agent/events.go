package agent

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The reasons of the pod events, as the kubelet names them.
const (
	eventPulling = "Pulling"
	eventPulled  = "Pulled"
	// eventInspectFailed: the image reference does not parse;
	// eventNeverPull: it is absent and may not be pulled.
	eventInspectFailed = "InspectFailed"
	eventNeverPull     = "ErrImageNeverPull"
	eventCreated       = "Created"
	eventStarted       = "Started"
	eventKilling       = "Killing"
	eventBackOff       = "BackOff"
	eventFailed        = "Failed"
	// Unhealthy: a probe started failing (once per change, not per probe).
	eventUnhealthy = "Unhealthy"
	// ProbeWarning: a probe succeeded with a warning (once per container
	// instance and warning).
	eventProbeWarning = "ProbeWarning"
)

// podEvents records what happens to pods as Kubernetes events. A nil
// recorder records nothing.
//
// A static pod's events name its mirror pod (same name and namespace) with
// the static pod's UID, which is its config hash: that is the UID `kubectl
// describe` looks events up by for a mirror pod (the value of its mirror
// annotation), so the events of every version of the pod are found on the
// mirror of that version, even those from before the mirror was made.
type podEvents struct {
	rec      record.EventRecorder
	nodeName string
}

func newPodEvents(rec record.EventRecorder, nodeName string) *podEvents {
	return &podEvents{rec: rec, nodeName: nodeName}
}

// ref is the object a pod's events are about.
func (e *podEvents) ref(pod *corev1.Pod) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
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
			e.imageEvents(ref, pod, a)
			var ie *runtime.ImageError
			switch {
			case a.Err == nil:
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventCreated, "Created container %s", a.Container)
				e.rec.Eventf(ref, corev1.EventTypeNormal, eventStarted, "Started container %s", a.Container)
			case errors.Is(a.Err, runtime.ErrCrashLoopBackOff):
				e.rec.Eventf(ref, corev1.EventTypeWarning, eventBackOff, "Back-off restarting failed container %s", a.Container)
			case errors.As(a.Err, &ie):
				// The image's own event said why; this says what the
				// container waits with, as the kubelet's does.
				e.rec.Eventf(ref, corev1.EventTypeWarning, eventFailed, "Error: %s", runtime.WaitingReason(a.Err))
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

// warnings records what the runtime did otherwise than the pod asked (its
// DNS settings cut, say) under the runtime's reasons; a warning about the
// node's configuration is recorded on the Node as well, as the kubelet
// does.
func (e *podEvents) warnings(pod *corev1.Pod, ws []runtime.Warning) {
	if e == nil || e.rec == nil {
		return
	}
	for _, w := range ws {
		e.rec.Event(e.ref(pod), corev1.EventTypeWarning, w.Reason, w.Message)
		if w.Node {
			node := &corev1.ObjectReference{Kind: "Node", Name: e.nodeName, UID: types.UID(e.nodeName)}
			e.rec.Event(node, corev1.EventTypeWarning, w.Reason, w.Message)
		}
	}
}

// imageEvents records how a starting container's image was had, or why
// not, in the kubelet's words.
func (e *podEvents) imageEvents(ref *corev1.ObjectReference, pod *corev1.Pod, a runtime.Action) {
	var ie *runtime.ImageError
	switch {
	case errors.As(a.Err, &ie):
		switch {
		case errors.Is(ie, runtime.ErrImagePullBackOff):
			e.rec.Eventf(ref, corev1.EventTypeNormal, eventBackOff, "Back-off pulling image %q", ie.Image)
		case errors.Is(ie, runtime.ErrImagePull):
			e.rec.Eventf(ref, corev1.EventTypeWarning, eventFailed, "Failed to pull image %q: %s", ie.Image, ie.Message)
		case errors.Is(ie, runtime.ErrInvalidImageName):
			e.rec.Eventf(ref, corev1.EventTypeWarning, eventInspectFailed, "%s", ie.Message)
		case errors.Is(ie, runtime.ErrImageNeverPull):
			e.rec.Eventf(ref, corev1.EventTypeWarning, eventNeverPull, "%s", ie.Message)
		}
	case a.Image.Pulled:
		// The runtime does not say how long the pull queued: none here.
		took := a.Image.Duration.Truncate(time.Millisecond)
		e.rec.Eventf(ref, corev1.EventTypeNormal, eventPulled, "Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
			imageOf(pod, a.Container), took, took, a.Image.Size)
	case a.Image.Image != "":
		// Found present (a later step may have failed).
		e.rec.Eventf(ref, corev1.EventTypeNormal, eventPulled, "Container image %q already present on machine", imageOf(pod, a.Container))
	}
}

// pulling records that a container's image is being pulled.
func (e *podEvents) pulling(pod *corev1.Pod, image string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeNormal, eventPulling, "Pulling image %q", image)
}

// unhealthy records a probe that started failing.
func (e *podEvents) unhealthy(pod *corev1.Pod, container, probe, message string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeWarning, eventUnhealthy, "%s probe of container %s failed: %s", probe, container, message)
}

// probeWarning records a probe's success that carried a warning.
func (e *podEvents) probeWarning(pod *corev1.Pod, container, probe, message string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeWarning, eventProbeWarning, "%s probe of container %s warning: %s", probe, container, message)
}

// imageOf is the image of the pod's container name.
func imageOf(pod *corev1.Pod, name string) string {
	for _, c := range podtypes.Containers(&pod.Spec) {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// stopping records that the pod is being stopped.
func (e *podEvents) stopping(pod *corev1.Pod, grace int64) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeNormal, eventKilling, "Stopping the pod's containers (grace period %ds)", grace)
}

// failedMount says why the pod's volumes could not be set up; the
// recorder folds repeats into one event with a count.
func (e *podEvents) failedMount(pod *corev1.Pod, err error) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeWarning, status.ReasonFailedMount, "MountVolume.SetUp failed: %v", err)
}

// deadlineExceeded says the pod outlived its spec.activeDeadlineSeconds.
// evicted records that the node evicts the pod, and why.
func (e *podEvents) evicted(pod *corev1.Pod, why string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeWarning, status.ReasonEvicted, "%s", why)
}

func (e *podEvents) deadlineExceeded(pod *corev1.Pod) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Eventf(e.ref(pod), corev1.EventTypeNormal, status.ReasonDeadlineExceeded, status.MessageDeadlineExceeded)
}

func (e *podEvents) refused(pod *corev1.Pod, reason, message string) {
	if e == nil || e.rec == nil {
		return
	}
	e.rec.Event(e.ref(pod), corev1.EventTypeWarning, reason, fmt.Sprintf("Pod was rejected: %s", message))
}
