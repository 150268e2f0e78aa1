package agent

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// SyncTerminatingPod stops every container of the pod, giving them exactly
// gracePeriod seconds, then its sandboxes, and stores its final status.
// Removing them is left to SyncTerminatedPod: once nothing of the pod
// runs, the next pod of a static pod's full name may start, and need not
// wait for that.
func (s *syncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, gracePeriod int64, statusFn func(*corev1.PodStatus)) error {
	uid := pod.UID
	s.enter(uid, phaseTerminating)
	if s.probes != nil {
		s.probes.StopPod(uid) // nothing it finds now can change what follows
	}
	// The newest status observed before the stop, in case the runtime
	// cannot be asked after it: SyncTerminatedPod removes the containers,
	// and with them what they ended with. The cache's (at most a relist
	// old, and refreshed by every sync) saves two runtime calls on the way
	// to the stop; the runtime is asked only when the cache knows nothing
	// of the pod.
	before, err := s.cache.Get(uid)
	if err != nil || len(before.Sandboxes) == 0 && len(before.Containers) == 0 {
		if fresh, ferr := s.rt.GetPodStatus(ctx, uid); ferr == nil {
			before = fresh
		}
	}
	s.events.stopping(pod, gracePeriod)
	// The sidecars' hooks run later, each right before its sidecar stops,
	// once the app containers it served have stopped.
	grace := s.hooks.PreStop(ctx, pod, withoutSidecars(pod, before), gracePeriod)
	var ips []string
	if before != nil {
		ips = before.IPs
	}
	sidecarPreStop := func(ctx context.Context, c *corev1.Container, id string, _ []string, left int64) int64 {
		return s.hooks.PreStopContainer(ctx, pod, c.Name, id, ips, left)
	}
	if err := s.rt.StopPod(ctx, pod, runtime.Pod{ID: uid, Name: pod.Name, Namespace: pod.Namespace}, &grace, sidecarPreStop); err != nil {
		return s.failed(uid, err)
	}
	if grace != gracePeriod {
		s.timeline.Record(uid, timeline.KindRuntime, "StopPod: grace period %ds (%ds, less what the preStop hooks took)", grace, gracePeriod)
	} else {
		s.timeline.Record(uid, timeline.KindRuntime, "StopPod: grace period %ds", grace)
	}
	// The stopped containers are still there: their exit codes, reasons
	// and times are the final status, not a guess from before the stop.
	if after, err := s.rt.GetPodStatus(ctx, uid); err == nil {
		before = after
	}
	st := status.Generate(status.Input{
		Pod: pod, Runtime: stopped(before, s.clock.Now()), Terminal: true, Evicted: s.evictions.reason(uid),
		Previous: s.statuses.Status(uid), Now: s.clock.Now(), HostIPs: s.hostIPs, Probes: s.probes,
	})
	statusFn(&st)
	s.statuses.Set(pod, st)
	return nil
}

// SyncTerminatingRuntimePod kills a pod that only the runtime knows, with
// the grace period its containers recorded.
func (s *syncer) SyncTerminatingRuntimePod(ctx context.Context, rp podworkers.RuntimePod) error {
	s.enter(rp.UID, phaseTerminating)
	if err := s.rt.KillPod(ctx, nil, runtime.Pod{ID: rp.UID, Name: rp.Name, Namespace: rp.Namespace}, nil); err != nil {
		return s.failed(rp.UID, err)
	}
	s.timeline.Record(rp.UID, timeline.KindRuntime, "KillPod: orphan %s/%s", rp.Namespace, rp.Name)
	if rp.Name != "" && rp.Namespace != "" {
		if err := s.rt.RemovePodLogDir(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rp.Name, Namespace: rp.Namespace, UID: rp.UID}}); err != nil {
			return s.failed(rp.UID, err)
		}
	}
	s.cache.Delete(rp.UID)
	s.forget(rp.UID)
	if s.probes != nil {
		s.probes.Forget(rp.UID)
	}
	return nil
}

// SyncTerminatedPod removes the pod's sandboxes and stopped containers from
// the runtime, then its volumes, once none of its containers runs. A
// pod its source still lists (one that completed) keeps its status and
// logs until the source drops it; housekeeping removes them then.
func (s *syncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	uid := pod.UID
	s.enter(uid, phaseTerminated)
	// Nothing runs any more: remove everything.
	noGrace := int64(0)
	if err := s.rt.KillPod(ctx, pod, runtime.Pod{ID: uid, Name: pod.Name, Namespace: pod.Namespace}, &noGrace); err != nil {
		return s.failed(uid, err)
	}
	s.timeline.Record(uid, timeline.KindRuntime, "KillPod: containers and sandboxes removed")
	if err := s.vols.Cleanup(uid); err != nil {
		return s.failed(uid, err)
	}
	s.finished(pod)
	if !s.desired(uid) {
		if err := removePodArtifacts(s.rt, s.statuses, pod); err != nil {
			return s.failed(uid, err)
		}
	}
	s.cache.Delete(uid)
	s.forget(uid)
	if s.probes != nil {
		s.probes.Forget(uid)
	}
	return nil
}

// removePodArtifacts removes what a pod that is gone for good leaves
// besides its volumes: its log directory and its status.
func removePodArtifacts(rt Runtime, statuses *status.Store, pod *corev1.Pod) error {
	if err := rt.RemovePodLogDir(pod); err != nil {
		return err
	}
	statuses.Delete(pod.UID)
	return nil
}

// stopped is the runtime status of a pod after KillPod: its sandboxes are
// not ready, and containers that were still running are gone without an
// exit status, which the kubelet reports as exit code 137 with reason
// ContainerStatusUnknown.
func stopped(rs *runtime.PodStatus, now time.Time) *runtime.PodStatus {
	if rs == nil {
		return nil
	}
	out := *rs
	out.IPs = nil
	out.Sandboxes = append([]runtime.SandboxStatus(nil), rs.Sandboxes...)
	for i := range out.Sandboxes {
		out.Sandboxes[i].State = runtime.SandboxNotReady
	}
	out.Containers = append([]runtime.ContainerStatus(nil), rs.Containers...)
	for i := range out.Containers {
		c := &out.Containers[i]
		if c.State == runtime.ContainerStateExited {
			continue
		}
		c.State, c.ExitCode, c.FinishedAt = runtime.ContainerStateExited, 137, now
		c.Reason = status.ReasonStatusUnknown
		c.Message = "The container was stopped with its pod; its exit status is gone with it"
	}
	return &out
}

// withoutSidecars is rs without the pod's sidecars.
func withoutSidecars(pod *corev1.Pod, rs *runtime.PodStatus) *runtime.PodStatus {
	if rs == nil {
		return nil
	}
	sidecar := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		sidecar[c.Name] = podtypes.IsSidecar(&c)
	}
	out := *rs
	out.Containers = slices.DeleteFunc(slices.Clone(rs.Containers), func(c runtime.ContainerStatus) bool { return sidecar[c.Name] })
	return &out
}
