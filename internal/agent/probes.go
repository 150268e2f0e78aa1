package agent

import (
	"context"
	"fmt"
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
		var ips []string
		if rs != nil {
			ips = rs.IPs
		}
		grace := s.hooks.PreStopContainer(ctx, pod, k.Container, k.ContainerID, ips, k.Grace)
		err := s.rt.StopContainer(ctx, k.ContainerID, grace)
		if err != nil {
			s.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (grace period %ds) failed: %v",
				k.Container, timeline.ShortID(k.ContainerID), k.Reason, grace, err)
			continue
		}
		s.timeline.Record(pod.UID, timeline.KindRuntime, "KillContainer %q %s: %s (grace period %ds)",
			k.Container, timeline.ShortID(k.ContainerID), k.Reason, grace)
	}
	fetched := s.clock.Now()
	fresh, err := s.rt.GetPodStatus(ctx, pod.UID)
	if err != nil {
		return rs
	}
	s.cache.Set(pod.UID, fresh, nil, fetched)
	return fresh
}

// syncHooks is what a SyncPod of pod needs of the prober: which sidecars
// passed their startup probe, each started container's postStart hook,
// run right after its start and before the next container starts, and
// the preStop hook of a container replaced because its spec changed.
// rs is the pod's runtime status before the sync, whose IPs a hook gets
// when the runtime has none at hand.
func (s *syncer) syncHooks(pod *corev1.Pod, rs *runtime.PodStatus) runtime.SyncHooks {
	pulling := func(_, image string) { s.events.pulling(pod, image) }
	if s.probes == nil {
		return runtime.SyncHooks{PullingImage: pulling}
	}
	return runtime.SyncHooks{
		PullingImage: pulling,
		Started:      s.probes.Started,
		PostStart: func(ctx context.Context, c *corev1.Container, id string, ips []string) error {
			return s.hooks.PostStart(ctx, pod, c, id, ips)
		},
		PreStop: func(ctx context.Context, c *corev1.Container, id string, ips []string, grace int64) int64 {
			if len(ips) == 0 && rs != nil {
				ips = rs.IPs
			}
			return s.hooks.PreStopContainer(ctx, pod, c.Name, id, ips, grace)
		},
	}
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
// (readiness within milliseconds, not at the next sync), records it with
// the time of each step (probeSteps), and syncs the pod, which kills a container whose liveness or startup probe
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
	what := fmt.Sprintf("%s probe of %q: %s", u.Kind, u.Container, u.Result)
	if u.Result == prober.Failure {
		what = fmt.Sprintf("%s probe of %q failed: %s", u.Kind, u.Container, u.Message)
		l.podEvents.unhealthy(pod, u.Container, u.Kind.String(), u.Message)
	}
	var shown time.Time
	var gen uint64
	if e, ok := l.statuses.Get(u.PodUID); ok && l.probes != nil {
		gen = l.statuses.Set(e.Pod, status.WithProbes(e.Pod, &e.Status, l.probes, l.clock.Now()))
		shown = l.clock.Now()
	}
	l.probeSteps.Shown(u, what, shown, gen)
	l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
}
