package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// statusCache is the PLEG's cache of runtime statuses; *pleg.Cache
// satisfies it.
type statusCache interface {
	GetNewerThan(ctx context.Context, uid types.UID, t time.Time) (*runtime.PodStatus, error)
	Get(uid types.UID) (*runtime.PodStatus, error)
	Set(uid types.UID, status *runtime.PodStatus, err error, timestamp time.Time)
	Delete(uid types.UID)
}

// The worker phases the timeline and PodInfo name, as the workers name them.
var (
	phaseSync        = podworkers.PhaseSync.String()
	phaseTerminating = podworkers.PhaseTerminating.String()
	phaseTerminated  = podworkers.PhaseTerminated.String()
	// phaseRefused: held back by the admission; no worker runs it.
	phaseRefused = "refused"
)

// syncer implements podworkers.Syncer: it does the work of each pod worker
// with the runtime, the volumes and the status store. The workers call it
// for one pod at a time, so per-pod state needs no ordering beyond mu.
type syncer struct {
	rt       Runtime
	vols     Volumes
	cache    statusCache
	statuses *status.Store
	timeline *timeline.Log
	events   *podEvents
	// hostIPs are the node's, for the pods' statuses.
	hostIPs []string
	// desired reports whether a source still wants the pod.
	desired func(types.UID) bool
	// finished is told of each pod SyncTerminatedPod has cleaned up.
	finished func(*corev1.Pod)
	clock    clock.PassiveClock
	log      logr.Logger
	probes   probeSet
	// hooks run the containers' lifecycle hooks; nil runs none.
	hooks *prober.Hooks
	// deadlines learns when each pod's active deadline passes.
	deadlines *deadlines
	// evictions are the pods the node evicts.
	evictions *evictions
	// metrics time SyncPod and the pods' starts.
	metrics kubeletMetrics
	// alloc gives each API pod the resources it was allocated.
	alloc *allocation.Store

	mu   sync.Mutex
	pods map[types.UID]*podRecord
}

// podRecord is what the syncer remembers between calls for one pod.
type podRecord struct {
	// lastSync is when the pod's last SyncPod that acted ended: the next one waits
	// for a runtime status observed after it, so it sees its own actions.
	lastSync time.Time
	phase    string
}

var _ podworkers.Syncer = (*syncer)(nil)

// enter notes which phase the pod's worker is in, recording a change in
// the timeline, and returns the pod's record as it was.
func (s *syncer) enter(uid types.UID, phase string) podRecord {
	s.mu.Lock()
	r, ok := s.pods[uid]
	if !ok {
		r = &podRecord{}
		s.pods[uid] = r
	}
	prev := *r
	r.phase = phase
	s.mu.Unlock()
	if prev.phase != phase {
		s.timeline.Record(uid, timeline.KindWorker, "%s", phase)
	}
	return prev
}

func (s *syncer) synced(uid types.UID, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pods[uid]; ok {
		r.lastSync = at
	}
}

func (s *syncer) forget(uid types.UID) {
	if err := s.alloc.Remove(uid); err != nil {
		s.log.Error(err, "Forgetting the pod's allocated resources", "podUID", uid)
	}
	s.deadlines.forget(uid)
	s.evictions.forget(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, uid)
}

// SyncPod sets up the pod's volumes, moves its runtime state toward its
// spec, and stores the status that results. It reports terminal once the
// pod has reached Succeeded or Failed.
func (s *syncer) SyncPod(ctx context.Context, typ podworkers.UpdateType, pod *corev1.Pod) (bool, error) {
	start := s.clock.Now()
	defer func() { s.metrics.observeSyncPod(typ, s.clock.Since(start)) }()
	uid := pod.UID
	// The pod as it is to run: a resize the node has not given yet waits.
	pod = s.alloc.Apply(pod)
	rec := s.enter(uid, phaseSync)
	rs, err := s.cache.GetNewerThan(ctx, uid, rec.lastSync)
	if err != nil {
		return false, s.failed(uid, fmt.Errorf("pod %s/%s: runtime status: %w", pod.Namespace, pod.Name, err))
	}
	stored := s.statuses.Status(uid)
	prev := stored
	if rec.phase == "" {
		// A new worker: whatever status a worker of this UID left (a pod
		// removed and put back) must not hold the new one in a terminal phase.
		prev = nil
	}
	if evicted := s.evictions.reason(uid) != ""; evicted || status.PastActiveDeadline(pod, prev, s.clock.Now()) {
		// Nothing more starts: the pod fails (store says why), and its
		// worker stops what runs. One that ended before stays as it ended.
		s.deadlines.forget(uid)
		if !evicted {
			s.timeline.Record(uid, timeline.KindWorker, "active deadline of %ds passed", *pod.Spec.ActiveDeadlineSeconds)
			s.events.deadlineExceeded(pod)
		}
		st := s.store(pod, rs, nil, nil, false, prev)
		return podtypes.IsTerminal(st.Phase), nil
	}
	mounts, err := s.vols.Setup(ctx, pod)
	if err != nil {
		// The containers wait; the status and an event say for what. Not
		// when the Node authorizer has only not seen the pod bound here
		// yet, a moment's lag that ends by itself (podobjects bounds it):
		// the pod is synced again, soon and at ObjectsReady, quietly.
		in := status.Input{
			Pod: pod, Runtime: rs, Previous: prev, Now: s.clock.Now(), HostIPs: s.hostIPs,
			Probes: s.probeStatus(pod, rs), ResizePending: s.alloc.Pending(uid),
		}
		lag := errors.Is(err, podobjects.ErrNotYetAuthorized)
		if !lag {
			in.Err, in.VolumesErr = err, err
		}
		s.statuses.Set(pod, status.Generate(in))
		if lag {
			return false, s.failed(uid, fmt.Errorf("%w: %w", podworkers.ErrTransient, err))
		}
		s.events.failedMount(pod, err)
		return false, s.failed(uid, err)
	}
	rs = s.killUnhealthy(ctx, pod, rs)
	res, syncErr := s.rt.SyncPod(ctx, pod, mounts, rs, s.syncHooks(pod, rs))
	if len(res.Actions) > 0 {
		// The next sync must see what these did. A sync that did nothing
		// (a volume's content refreshed, say) leaves the runtime as the
		// status it read shows it: the next one need not wait for a relist.
		s.synced(uid, s.clock.Now())
	}
	s.recordActions(uid, res.Actions)
	s.events.actions(pod, res.Actions)
	s.events.warnings(pod, res.Warnings)
	if len(res.Actions) > 0 && ctx.Err() == nil {
		// The status of before the actions is stale now; the PLEG would
		// tell within a relist, but the status store can know at once.
		// The PLEG's cache learns it too, so that the relist that sees
		// these actions need not ask the runtime again.
		fetched := s.clock.Now()
		if fresh, err := s.rt.GetPodStatus(ctx, uid); err == nil {
			rs = fresh
			s.cache.Set(uid, fresh, nil, fetched)
		}
	}
	st := s.store(pod, rs, &res, syncErr, res.Terminal, prev)
	if st.Phase == corev1.PodRunning && startedNow(pod, stored) {
		if seen, ok := firstSeen(pod); ok {
			s.metrics.observePodStart(seen, s.clock.Now())
		}
	}
	terminal := podtypes.IsTerminal(st.Phase)
	if at, ok := status.ActiveDeadline(pod, &st); ok && !terminal {
		s.deadlines.set(uid, at)
	} else {
		s.deadlines.forget(uid)
	}
	if syncErr != nil {
		return terminal, s.failed(uid, classify(pod, syncErr))
	}
	return terminal, nil
}

// store generates the pod's API status and stores it.
func (s *syncer) store(pod *corev1.Pod, rs *runtime.PodStatus, res *runtime.SyncResult, err error, terminal bool, prev *corev1.PodStatus) corev1.PodStatus {
	st := status.Generate(status.Input{
		Pod: pod, Runtime: rs, Result: res, Err: err, Terminal: terminal, Previous: prev, Now: s.clock.Now(), HostIPs: s.hostIPs,
		Probes: s.probeStatus(pod, rs), Evicted: s.evictions.reason(pod.UID), ResizePending: s.alloc.Pending(pod.UID),
	})
	s.statuses.Set(pod, st)
	return st
}

func (s *syncer) recordActions(uid types.UID, actions []runtime.Action) {
	for _, a := range actions {
		var b strings.Builder
		b.WriteString(string(a.Kind))
		if a.Container != "" {
			fmt.Fprintf(&b, " %q", a.Container)
		}
		if a.ID != "" {
			fmt.Fprintf(&b, " %s", timeline.ShortID(a.ID))
		}
		if a.Reason != "" {
			fmt.Fprintf(&b, ": %s", a.Reason)
		}
		if a.Err != nil {
			fmt.Fprintf(&b, " (failed: %v)", a.Err)
		}
		s.timeline.Record(uid, timeline.KindRuntime, "%s", b.String())
	}
}

// failed records a sync error in the pod's timeline, unless it only says
// the worker's context ended.
func (s *syncer) failed(uid types.UID, err error) error {
	if !errors.Is(err, context.Canceled) {
		s.timeline.Record(uid, timeline.KindError, "%v", err)
	}
	return err
}

// classify marks the failures the workers should retry soon rather than
// after the full back-off: a sandbox that could not be created for want
// of a pod network (the runtime reports no network readiness of its own;
// containerd's refusal names its CNI), and a name still reserved by a
// request in flight, typically one this agent made before it was killed,
// and an instance that cannot be replaced while such a start ends.
func classify(pod *corev1.Pod, err error) error {
	if errors.Is(err, runtime.ErrNameReserved) || errors.Is(err, runtime.ErrStillStarting) {
		return fmt.Errorf("%w: %w", podworkers.ErrTransient, err)
	}
	if pod.Spec.HostNetwork || !errors.Is(err, runtime.ErrCreateSandbox) {
		return err
	}
	msg := strings.ToLower(err.Error())
	for _, hint := range []string{"cni plugin not initialized", "network not ready", "networkready", "cni config"} {
		if strings.Contains(msg, hint) {
			return fmt.Errorf("%w: %w", podworkers.ErrNetworkNotReady, err)
		}
	}
	return err
}
