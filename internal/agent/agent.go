package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Agent runs the pods its config sources want on the container runtime:
// its sync loop takes the config updates, the PLEG's events and the
// probes' results to the pod workers, and housekeeping runs on its tick.
// The long-running parts it drives (the pod workers, the PLEG, the
// prober, the checkpoint keeper, API sync) are built and run by the
// caller; see the package documentation.
type Agent struct {
	pods     *podmanager.Manager
	workers  *podworkers.PodWorkers
	pleg     *pleg.PLEG
	statuses *status.Store
	timeline *timeline.Log
	loop     *syncLoop
	// evictions are the pods the node evicts (Evict).
	evictions *evictions
	ckpt      *keeper.Keeper
	adoption  *adoptionRuntime
	admission *admission.HostPorts
	// api is nil in standalone mode.
	api     *apisync.Sync
	events  *podEvents
	log     logr.Logger
	running atomic.Bool
}

// New builds the Agent over the syncer its pod workers call; Run runs its
// loop.
func New(opts Options) (*Agent, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := opts.Syncer
	log := opts.Logger.WithName("agent")
	a := &Agent{
		pods: s.index, workers: opts.Workers, pleg: opts.PLEG, statuses: s.statuses, timeline: s.timeline,
		evictions: s.evictions, ckpt: opts.Checkpoint, adoption: s.adoption, admission: admission.NewHostPorts(),
		api: s.api, events: s.events, log: log,
	}
	waiting := admission.NewWaiting()
	a.loop = &syncLoop{
		updates: opts.Updates, events: opts.PLEG.Events(), pods: s.index, workers: opts.Workers,
		probeUpdates: opts.Prober.Updates(), probes: opts.Prober, probeSteps: opts.ProbeSteps, deadlines: s.deadlines,
		timeline: s.timeline, clock: opts.Clock, due: opts.DueInterval, ckpt: opts.Checkpoint,
		admission: a.admission, statuses: s.statuses, api: s.api, podEvents: s.events,
		objects: s.objects, objectChanges: opts.ObjectChanges, stops: s.stops,
		waiting:      waiting,
		sysctls:      opts.Sysctls,
		alloc:        s.alloc,
		nodeLabels:   opts.NodeLabels,
		housekeeping: opts.HousekeepingInterval, log: log.WithName("loop"),
		stall: syncLoopThreshold(opts.SyncFrequency),
		housekeeper: &housekeeper{
			pods: s.index, workers: opts.Workers, rt: s.adoption.Runtime, vols: s.vols,
			statuses: s.statuses, timeline: s.timeline, sourcesReady: opts.SourcesReady,
			podsDir: filepath.Join(opts.RootDir, "pods"), retention: opts.TimelineRetention,
			clock: opts.Clock, log: log.WithName("housekeeping"), ckpt: opts.Checkpoint, alloc: s.alloc,
			held:   func(uid types.UID) bool { return a.admission.IsRefused(uid) || waiting.IsHeld(uid) },
			listed: opts.PLEG.Pods,
		},
	}
	a.loop.handlers = newPodHandlers(a.loop)
	return a, nil
}

// Run runs the sync loop until ctx ends. It kills no pod on its way out:
// what runs keeps running, for the next agent to adopt. It may be called
// once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	a.log.Info("Starting")
	err := a.loop.run(ctx)
	a.log.Info("Stopped", "err", err)
	return err
}

// Problems lists what goes wrong without stopping any pod: a checkpoint
// that cannot be written.
func (a *Agent) Problems() []string {
	if err := a.ckpt.Problem(); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// Ready reports nil once the runtime has answered a relist and the PLEG
// is healthy.
func (a *Agent) Ready() error {
	if err := a.pleg.Healthy(); err != nil {
		return fmt.Errorf("agent not ready: %w", err)
	}
	return nil
}

// Restore brings back the static pods of the checkpoint (see
// keeper.Keeper.Restore): call it after New and before the sources start.
// Without a checkpoint it does nothing.
func (a *Agent) Restore(ctx context.Context, sink keeper.Sink, sources []podtypes.Source) (keeper.RestoreResult, error) {
	return a.ckpt.Restore(ctx, sources, keeper.Targets{Sink: sink, Statuses: a.statuses, Workers: a.workers, Timeline: a.timeline})
}

// Connected tells the agent that connected mode runs: the Node is got
// from node once it exists, and the API pods that came before it are
// admitted against it.
func (a *Agent) Connected(node mirror.NodeGetter) {
	a.loop.waiting.Connected(node)
}
