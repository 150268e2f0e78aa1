package agent

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// postStartTimeout bounds a postStart hook, which the kubelet lets run
// for ever: the pod's worker waits for it, and a hook that hangs must not
// hold the pod for good.
const postStartTimeout = 2 * time.Minute

// ReasonFailedPostStartHook and ReasonFailedPreStopHook name a failed
// hook, as the kubelet's events do.
const (
	ReasonFailedPostStartHook = "FailedPostStartHook"
	ReasonFailedPreStopHook   = "FailedPreStopHook"
)

// hookContainers lists the pod's containers (sidecars and app containers)
// with the hook pick chooses.
func hookContainers(pod *corev1.Pod, pick func(*corev1.Lifecycle) *corev1.LifecycleHandler) map[string]*corev1.Container {
	out := map[string]*corev1.Container{}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if c := &cs[i]; c.Lifecycle != nil && pick(c.Lifecycle) != nil {
				out[c.Name] = c
			}
		}
	}
	return out
}

func postStart(l *corev1.Lifecycle) *corev1.LifecycleHandler { return l.PostStart }
func preStop(l *corev1.Lifecycle) *corev1.LifecycleHandler   { return l.PreStop }

func podIP(rs *runtime.PodStatus) string {
	if rs == nil || len(rs.IPs) == 0 {
		return ""
	}
	return rs.IPs[0]
}

// syncHooks is what a SyncPod of pod needs of the probes: which sidecars
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
			return s.postStart(ctx, pod, c, id, ips)
		},
		PreStop: func(ctx context.Context, c *corev1.Container, id string, ips []string, grace int64) int64 {
			if len(ips) == 0 && rs != nil {
				ips = rs.IPs
			}
			one := &runtime.PodStatus{ID: pod.UID, IPs: ips, Containers: []runtime.ContainerStatus{
				{ID: id, Name: c.Name, State: runtime.ContainerStateRunning}}}
			return s.runPreStop(ctx, pod, one, grace)
		},
	}
}

// postStart runs the container's postStart hook, before the pod's status
// shows it running. A container whose hook fails is killed with the pod's
// grace period and restarts as its restart policy says.
func (s *syncer) postStart(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, ips []string) error {
	ip := ""
	if len(ips) > 0 {
		ip = ips[0]
	}
	began := s.clock.Now()
	err := s.probes.RunHook(ctx, c.Lifecycle.PostStart, pod, c, id, ip, postStartTimeout)
	took := s.clock.Since(began).Round(time.Millisecond)
	if err == nil {
		s.timeline.Record(pod.UID, timeline.KindRuntime, "PostStart hook of %q ran in %v", c.Name, took)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // the worker is being stopped; what follows is the kill's
	}
	reason := ReasonFailedPostStartHook + ": " + err.Error()
	s.log.Info("PostStart hook failed; killing the container", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID,
		"container", c.Name, "err", err)
	s.probes.NoteKill(pod.UID, c.Name, id, reason)
	grace := podtypes.GracePeriod(pod)
	if kerr := s.rt.StopContainer(ctx, id, grace); kerr != nil {
		s.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (grace period %ds) failed: %v", c.Name, shortID(id), reason, grace, kerr)
		return err
	}
	s.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (after %v; grace period %ds)", c.Name, shortID(id), reason, took, grace)
	return err
}

// runPreStop runs the preStop hooks of the pod's running containers, at
// once and each within the grace period, and returns the whole seconds of
// it left for the stop: the stop signal follows the hooks, and the kill
// comes no later than grace seconds after the call.
func (s *syncer) runPreStop(ctx context.Context, pod *corev1.Pod, rs *runtime.PodStatus, grace int64) int64 {
	if s.probes == nil || rs == nil {
		return grace
	}
	hooked := hookContainers(pod, preStop)
	if len(hooked) == 0 {
		return grace
	}
	began := s.clock.Now()
	deadline := began.Add(time.Duration(grace) * time.Second)
	var wg sync.WaitGroup
	for _, c := range rs.RunningContainers() {
		spec := hooked[c.Name]
		if spec == nil || c.State != runtime.ContainerStateRunning {
			continue
		}
		wg.Go(func() { s.preStopOne(ctx, pod, spec, c.ID, podIP(rs), deadline) })
	}
	wg.Wait()
	left := deadline.Sub(s.clock.Now()).Seconds()
	return max(int64(math.Floor(left)), 0)
}

// preStopOne runs one container's preStop hook until deadline and records
// how it went.
func (s *syncer) preStopOne(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id, ip string, deadline time.Time) {
	began := s.clock.Now()
	err := s.probes.RunHook(ctx, c.Lifecycle.PreStop, pod, c, id, ip, deadline.Sub(began))
	took := s.clock.Since(began).Round(time.Millisecond)
	switch {
	case err == nil:
		s.timeline.Record(pod.UID, timeline.KindRuntime, "PreStop hook of %q ran in %v", c.Name, took)
	case errors.Is(err, context.Canceled):
	default:
		s.log.Info("PreStop hook failed; stopping the container anyway", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID,
			"container", c.Name, "err", err)
		s.timeline.Record(pod.UID, timeline.KindError, "%s: %q after %v: %v", ReasonFailedPreStopHook, c.Name, took, err)
	}
}
