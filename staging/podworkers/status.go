package podworkers

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podState is everything the workers remember about one pod UID. The
// transition function is the only code that changes it; it holds no lock,
// goroutine or clock, so a test can build one and step it by hand.
type podState struct {
	uid      types.UID
	fullName string
	static   bool

	// The lifecycle. Each flag, once set, stays set; each implies the
	// ones above it, except started, which a pod killed while waiting to
	// start never sets.
	started              bool // allowed to start: containers may exist from here on
	terminationRequested bool // SyncPod will not be called again
	terminationStarted   bool // SyncTerminating* has been called: nothing new will start
	terminated           bool // SyncTerminating* succeeded: no container runs
	finished             bool // SyncTerminatedPod succeeded, or nothing ever ran

	deleted          bool  // the pod was deleted from its source (or has none)
	evicted          bool  // a kill asked to reclaim the pod's resources
	restartRequested bool  // a Create arrived after termination was requested
	observedRuntime  bool  // a runtime-only kill showed the pod has containers
	gracePeriod      int64 // seconds, in force once termination is requested

	pending    podUpdate // the newest update the worker has not taken yet
	hasPending bool
	last       podUpdate // what the worker took, merged: the spec in force
	inFlight   Work      // the Syncer call running now, or workNone

	notify    []chan<- struct{}         // closed once terminated
	statusFns []func(*corev1.PodStatus) // applied in order by SyncTerminatingPod
}

// podUpdate is the part of an update a worker acts on.
type podUpdate struct {
	typ     UpdateType
	pod     *corev1.Pod
	runtime *RuntimePod
}

// merge lays newer over u: fields newer leaves nil keep u's values, so a
// kill without a spec loses nothing.
func (u podUpdate) merge(newer podUpdate) podUpdate {
	if newer.pod == nil {
		newer.pod = u.pod
	}
	if newer.runtime == nil {
		newer.runtime = u.runtime
	}
	return newer
}

func newPodState(uid types.UID, fullName string, static bool) podState {
	return podState{uid: uid, fullName: fullName, static: static}
}

func (s *podState) phase() Phase {
	switch {
	case s.terminated:
		return PhaseTerminated
	case s.terminationRequested:
		return PhaseTerminating
	}
	return PhaseSync
}

// spec returns the newest spec the worker has, taken or not.
func (s *podState) spec() *corev1.Pod {
	if s.hasPending && s.pending.pod != nil {
		return s.pending.pod
	}
	return s.last.pod
}

// nextWork says which Syncer method the worker calls next.
func (s *podState) nextWork() Work {
	switch {
	case s.terminated:
		return WorkTerminated
	case s.terminationRequested && s.last.pod == nil:
		return WorkTerminatingRuntime
	case s.terminationRequested:
		return WorkTerminating
	}
	return WorkSync
}

// needsGate reports whether the worker must ask the static pod start gate
// before it can take its pending update.
func (s *podState) needsGate() bool {
	return s.static && !s.started && s.hasPending && !s.terminationRequested
}

func (s *podState) known(orphan bool) KnownPod {
	return KnownPod{Phase: s.phase(), Orphan: orphan, HasConfig: s.spec() != nil, Static: s.static}
}

// gracePeriod returns the grace period in force after a kill: the shortest
// of the one already in force (if inForce), the pod's deletion grace period
// and the kill's override; failing all three the pod's spec, failing that
// the API default. It is honoured exactly: 0 stops the containers at once,
// where the kubelet would still give them a second; a negative value is 0.
func gracePeriod(current int64, inForce bool, pod *corev1.Pod, override *int64) int64 {
	g, set := current, inForce
	lower := func(v *int64) {
		if v != nil && (!set || *v < g) {
			g, set = *v, true
		}
	}
	if pod != nil {
		lower(pod.DeletionGracePeriodSeconds)
	}
	lower(override)
	if !set {
		g = int64(corev1.DefaultTerminationGracePeriodSeconds)
		if pod != nil {
			g = podtypes.GracePeriod(pod)
		}
	}
	return max(g, 0)
}

// chainStatus applies fns in order.
func chainStatus(fns []func(*corev1.PodStatus)) func(*corev1.PodStatus) {
	switch len(fns) {
	case 0:
		return func(*corev1.PodStatus) {}
	case 1:
		return fns[0]
	}
	fns = slices.Clone(fns)
	return func(st *corev1.PodStatus) {
		for _, fn := range fns {
			fn(st)
		}
	}
}
