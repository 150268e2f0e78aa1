package agent

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// syncLoop is the one place that fans work out: config updates, PLEG
// events, due pods and housekeeping all pass through its select, one at a
// time, so that the order in which the pod manager and the workers learn
// about pods is the order in which they happened.
type syncLoop struct {
	updates      <-chan podtypes.PodUpdate
	events       <-chan pleg.PodLifecycleEvent
	probeUpdates <-chan prober.Update
	probes       status.Probes
	// probeSteps follows each probe result's change to the statuses.
	probeSteps  *prober.Steps
	pods        *podmanager.Manager
	workers     loopWorkers
	deadlines   *deadlines
	housekeeper *housekeeper
	ckpt        loopCheckpoint
	admission   *admission.HostPorts
	// waiting holds the API pods that came before the Node was known.
	waiting *admission.Waiting
	sysctls *admission.Sysctls
	// alloc holds what the API pods were allocated (resize.go).
	alloc      *allocation.Store
	nodeLabels map[string]string
	// objects is nil in standalone mode.
	objects PodObjects
	// objectChanges are those of the API pods' ConfigMaps and Secrets.
	objectChanges *podobjects.Changes
	// stops signals pods that stopped for good: held pods may run now.
	stops    *podStops
	statuses *status.Store
	api      loopAPISync
	// handlers apply the config updates, one for each kind of pod.
	handlers     podHandlers
	podEvents    *podEvents
	timeline     *timeline.Log
	clock        clock.WithTicker
	due          time.Duration
	housekeeping time.Duration
	log          logr.Logger
	// entered is when the loop last began an iteration (UnixNano; 0:
	// never), stall how long it may go without one (SyncLoopHealthy).
	entered atomic.Int64
	stall   time.Duration
}

// What the loop needs of the pod workers (*podworkers.PodWorkers), the
// checkpoint keeper (*keeper.Keeper) and API sync (*apisync.Sync, nil in
// standalone mode); the stories (stories_test.go) record these calls.
type (
	loopWorkers interface {
		UpdatePod(podworkers.UpdatePodOptions) error
		IsPodTerminationRequested(types.UID) bool
		CouldHaveRunningContainers(types.UID) bool
		DuePods() []types.UID
	}
	loopCheckpoint interface {
		Accepted(*corev1.Pod)
		ForgetCompleted(types.UID)
		FinalStatus(types.UID) *corev1.PodStatus
		WasRestored(types.UID) bool
	}
	loopAPISync interface {
		StaticPodChanged(*corev1.Pod)
		StaticPodRemoved(*corev1.Pod)
		MirrorPodChanged(*corev1.Pod)
		MirrorPodRemoved(*corev1.Pod)
		APIPodChanged(*corev1.Pod)
		APIPodRemoved(*corev1.Pod)
	}
)

// run loops until ctx ends. It kills nothing on its way out.
func (l *syncLoop) run(ctx context.Context) error {
	due := l.clock.NewTicker(l.due)
	defer due.Stop()
	hk := l.clock.NewTicker(l.housekeeping)
	defer hk.Stop()
	events := l.events
	for {
		// Go picks among ready cases at random: once ctx has ended, nothing
		// else may be acted on.
		if ctx.Err() != nil {
			return nil
		}
		l.entered.Store(l.clock.Now().UnixNano())
		select {
		case <-ctx.Done():
			return nil
		case u := <-l.updates:
			l.handleUpdate(u)
		case e, ok := <-events:
			if !ok {
				events = nil // the PLEG has stopped: ctx is ending
				continue
			}
			l.handleEvent(e)
		case u := <-l.probeUpdates:
			l.probeChanged(u)
		case <-l.objectChanges.Signal():
			l.syncObjectUsers(l.objectChanges.Take())
		case <-l.stops.signal:
			l.readmit()
		case <-due.C():
			l.syncDue()
		case <-hk.C():
			// Take in what the sources have sent before deciding what is
			// an orphan.
			l.drainUpdates(ctx)
			l.readmit()
			l.housekeeper.run(ctx)
		}
	}
}

func (l *syncLoop) drainUpdates(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case u := <-l.updates:
			l.handleUpdate(u)
		default:
			return
		}
	}
}

// handleEvent syncs the pod a runtime change is about. A removed container
// needs no sync; a pod no source wants is housekeeping's.
func (l *syncLoop) handleEvent(e pleg.PodLifecycleEvent) {
	if e.Type == pleg.ContainerRemoved {
		return
	}
	if pod, ok := l.pods.PodByUID(e.ID); ok {
		l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
	}
}

// syncDue syncs the pods the workers' queue says are due, and those whose
// active deadline has passed.
func (l *syncLoop) syncDue() {
	for _, uid := range append(l.workers.DuePods(), l.deadlines.due(l.clock.Now())...) {
		if pod, ok := l.pods.PodByUID(uid); ok {
			l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
		}
	}
}

func (l *syncLoop) update(opts podworkers.UpdatePodOptions) {
	if err := l.workers.UpdatePod(opts); err != nil {
		l.log.V(2).Info("Pod update not taken", "err", err)
	}
}

// syncObjectUsers syncs the API pods that reference the changed objects.
func (l *syncLoop) syncObjectUsers(changes []podobjects.Change) {
	for _, pod := range l.pods.Pods() {
		if podtypes.IsStaticPod(pod) || podtypes.IsMirrorPod(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		if slices.ContainsFunc(changes, func(c podobjects.Change) bool { return c.Affects(pod) }) {
			l.update(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
		}
	}
}
