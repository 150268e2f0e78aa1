package agent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// probeSet is what the agent needs of the prober; *prober.Manager
// satisfies it. A nil probeSet probes nothing.
type probeSet interface {
	status.Probes
	Sync(pod *corev1.Pod, rs *runtime.PodStatus)
	StopPod(uid types.UID)
	Forget(uid types.UID)
	Unhealthy(uid types.UID) []prober.Kill
	NoteKill(uid types.UID, container, containerID, reason string)
	RunHook(ctx context.Context, h *corev1.LifecycleHandler, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, timeout time.Duration) error
}

// killUnhealthy stops the pod's containers whose liveness or startup probe
// failed, each with its probe's grace period (its preStop hook first,
// within it), and returns the pod's runtime status after the kills. The
// SyncPod that follows restarts them as the restart policy and the
// crash-loop back-off say, as it would any container that exited.
func (s *syncer) killUnhealthy(ctx context.Context, pod *corev1.Pod, rs *runtime.PodStatus) *runtime.PodStatus {
	if s.probes == nil || pod.DeletionTimestamp != nil {
		return rs
	}
	kills := s.probes.Unhealthy(pod.UID)
	if len(kills) == 0 {
		return rs
	}
	for _, k := range kills {
		s.log.Info("Killing a container: its probe failed", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID,
			"container", k.Container, "containerID", k.ContainerID, "gracePeriod", k.Grace, "reason", k.Reason)
		grace := k.Grace
		if c := hookContainers(pod, preStop)[k.Container]; c != nil {
			one := &runtime.PodStatus{ID: pod.UID, Containers: []runtime.ContainerStatus{
				{ID: k.ContainerID, Name: k.Container, State: runtime.ContainerStateRunning}}}
			if rs != nil {
				one.IPs = rs.IPs
			}
			grace = s.runPreStop(ctx, pod, one, k.Grace)
		}
		err := s.rt.StopContainer(ctx, k.ContainerID, grace)
		if err != nil {
			s.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (grace period %ds) failed: %v",
				k.Container, shortID(k.ContainerID), k.Reason, grace, err)
			continue
		}
		s.timeline.Record(pod.UID, timeline.KindRuntime, "KillContainer %q %s: %s (grace period %ds)",
			k.Container, shortID(k.ContainerID), k.Reason, grace)
	}
	fetched := s.clock.Now()
	fresh, err := s.rt.GetPodStatus(ctx, pod.UID)
	if err != nil {
		return rs
	}
	s.cache.Set(pod.UID, fresh, nil, fetched)
	return fresh
}

// probeStatus hands the pod's newest runtime status to the prober, which
// starts and ends probe workers as containers start and end, and returns
// what the probes found, for the pod's status.
func (s *syncer) probeStatus(pod *corev1.Pod, rs *runtime.PodStatus) status.Probes {
	if s.probes == nil {
		return nil
	}
	s.probes.Sync(pod, rs)
	return s.probes
}

// probeChanged shows a probe's new result in the pod's status at once
// (readiness within milliseconds, not at the next sync), records it, and
// syncs the pod, which kills a container whose liveness or startup probe
// failed.
func (l *syncLoop) probeChanged(u prober.Update) {
	pod, ok := l.pods.PodByUID(u.PodUID)
	if !ok {
		return
	}
	if u.Warning {
		l.timeline.Record(u.PodUID, timeline.KindProbe, "%s probe of %q succeeded with a warning: %s", u.Kind, u.Container, u.Message)
		l.podEvents.probeWarning(pod, u.Container, u.Kind.String(), u.Message)
		return // its result did not change
	}
	if u.Result == prober.Failure {
		l.timeline.Record(u.PodUID, timeline.KindProbe, "%s probe of %q failed: %s", u.Kind, u.Container, u.Message)
		l.podEvents.unhealthy(pod, u.Container, u.Kind.String(), u.Message)
	} else {
		l.timeline.Record(u.PodUID, timeline.KindProbe, "%s probe of %q: %s", u.Kind, u.Container, u.Result)
	}
	if e, ok := l.statuses.Get(u.PodUID); ok && l.probes != nil {
		l.statuses.Set(e.Pod, status.WithProbes(e.Pod, &e.Status, l.probes, l.clock.Now()))
	}
	l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
}
