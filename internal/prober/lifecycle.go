package prober

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
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

// ContainerStopper stops a container within a grace period; the agent's
// runtime satisfies it.
type ContainerStopper interface {
	StopContainer(ctx context.Context, id string, grace int64) error
}

// Hooks is when the containers' lifecycle hooks run, and what follows
// them: postStart right after a container's start (a failure kills the
// container), preStop before a stop, within the grace period, whose rest
// the stop gets. RunHook runs each hook's action. A nil *Hooks runs none.
type Hooks struct {
	m        *Manager
	stop     ContainerStopper
	timeline *timeline.Log
	log      logr.Logger
}

// Hooks returns the hooks run with m's handlers and clock: a container
// whose postStart fails is stopped through stop, and each hook's outcome
// recorded in tl.
func (m *Manager) Hooks(stop ContainerStopper, tl *timeline.Log, log logr.Logger) *Hooks {
	return &Hooks{m: m, stop: stop, timeline: tl, log: log}
}

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

func preStop(l *corev1.Lifecycle) *corev1.LifecycleHandler { return l.PreStop }

func podIP(rs *runtime.PodStatus) string {
	if rs == nil || len(rs.IPs) == 0 {
		return ""
	}
	return rs.IPs[0]
}

// PostStart runs the container's postStart hook, before the pod's status
// shows it running. A container whose hook fails is killed with the pod's
// grace period and restarts as its restart policy says.
func (h *Hooks) PostStart(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, ips []string) error {
	if h == nil {
		return nil
	}
	ip := ""
	if len(ips) > 0 {
		ip = ips[0]
	}
	began := h.m.clock.Now()
	err := h.m.RunHook(ctx, c.Lifecycle.PostStart, pod, c, id, ip, postStartTimeout)
	took := h.m.clock.Since(began).Round(time.Millisecond)
	if err == nil {
		h.timeline.Record(pod.UID, timeline.KindRuntime, "PostStart hook of %q ran in %v", c.Name, took)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // the worker is being stopped; what follows is the kill's
	}
	reason := ReasonFailedPostStartHook + ": " + err.Error()
	h.log.Info("PostStart hook failed; killing the container", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID,
		"container", c.Name, "err", err)
	h.m.NoteKill(pod.UID, c.Name, id, reason)
	grace := podtypes.GracePeriod(pod)
	if kerr := h.stop.StopContainer(ctx, id, grace); kerr != nil {
		h.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (grace period %ds) failed: %v", c.Name, timeline.ShortID(id), reason, grace, kerr)
		return err
	}
	h.timeline.Record(pod.UID, timeline.KindError, "KillContainer %q %s: %s (after %v; grace period %ds)", c.Name, timeline.ShortID(id), reason, took, grace)
	return err
}

// PreStop runs the preStop hooks of the pod's running containers in rs,
// at once and each within the grace period, and returns the whole seconds
// of it left for the stop: the stop signal follows the hooks, and the kill
// comes no later than grace seconds after the call.
func (h *Hooks) PreStop(ctx context.Context, pod *corev1.Pod, rs *runtime.PodStatus, grace int64) int64 {
	if h == nil || rs == nil {
		return grace
	}
	hooked := hookContainers(pod, preStop)
	if len(hooked) == 0 {
		return grace
	}
	began := h.m.clock.Now()
	deadline := began.Add(time.Duration(grace) * time.Second)
	var wg sync.WaitGroup
	for _, c := range rs.RunningContainers() {
		spec := hooked[c.Name]
		if spec == nil || c.State != runtime.ContainerStateRunning {
			continue
		}
		wg.Go(func() { h.preStopOne(ctx, pod, spec, c.ID, podIP(rs), deadline) })
	}
	wg.Wait()
	left := deadline.Sub(h.m.clock.Now()).Seconds()
	return max(int64(math.Floor(left)), 0)
}

// PreStopContainer is PreStop for one running container, the instance id
// of the pod's container name, in a pod with the given IPs: before a
// sidecar stops, or a container replaced or killed for a failed probe.
func (h *Hooks) PreStopContainer(ctx context.Context, pod *corev1.Pod, name, id string, ips []string, grace int64) int64 {
	if hookContainers(pod, preStop)[name] == nil {
		return grace
	}
	one := &runtime.PodStatus{ID: pod.UID, IPs: ips, Containers: []runtime.ContainerStatus{
		{ID: id, Name: name, State: runtime.ContainerStateRunning}}}
	return h.PreStop(ctx, pod, one, grace)
}

// preStopOne runs one container's preStop hook until deadline and records
// how it went.
func (h *Hooks) preStopOne(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id, ip string, deadline time.Time) {
	began := h.m.clock.Now()
	err := h.m.RunHook(ctx, c.Lifecycle.PreStop, pod, c, id, ip, deadline.Sub(began))
	took := h.m.clock.Since(began).Round(time.Millisecond)
	switch {
	case err == nil:
		h.timeline.Record(pod.UID, timeline.KindRuntime, "PreStop hook of %q ran in %v", c.Name, took)
	case errors.Is(err, context.Canceled):
	default:
		h.log.Info("PreStop hook failed; stopping the container anyway", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID,
			"container", c.Name, "err", err)
		h.timeline.Record(pod.UID, timeline.KindError, "%s: %q after %v: %v", ReasonFailedPreStopHook, c.Name, took, err)
	}
}
