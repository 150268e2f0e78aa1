package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Agent runs the pods its config sources want on the container runtime.
// It only wires its parts; see the package documentation.
type Agent struct {
	pods     *podmanager.Manager
	workers  *podworkers.PodWorkers
	pleg     *pleg.PLEG
	statuses *status.Store
	timeline *timeline.Log
	loop     *syncLoop
	// stops tells the loop of pods that stopped for good.
	stops     *podStops
	collector *collector
	// evictions are the pods the node evicts (Evict).
	evictions *evictions
	ckpt      *keeper.Keeper
	adoption  *adoptionRuntime
	admission *admission.HostPorts
	metrics   *agentMetrics
	prober    *prober.Manager
	// api is nil in standalone mode.
	api      *apisync.Sync
	events   *podEvents
	nodeName string
	log      logr.Logger
	running  atomic.Bool
}

// New builds an Agent; Run starts it.
func New(opts Options) (*Agent, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	log := opts.Logger.WithName("agent")
	m, err := newMetrics(opts.Registry, opts.NodeName)
	if err != nil {
		return nil, fmt.Errorf("agent metrics: %w", err)
	}
	a := &Agent{
		pods:      podmanager.New(),
		timeline:  timeline.NewWithClock(opts.TimelinePerPod, opts.Clock),
		log:       log,
		metrics:   m,
		admission: admission.NewHostPorts(),
		stops:     newPodStops(),
		nodeName:  opts.NodeName,
	}
	a.events = newPodEvents(opts.Recorder, opts.NodeName)
	var statusChanged func(types.UID)
	if opts.Connected {
		statusChanged = func(uid types.UID) { a.api.StatusChanged(uid) }
	}
	a.statuses = status.NewStore(m.PodPhases, statusChanged)
	if opts.Connected {
		a.api, err = apisync.New(apisync.Options{
			NodeName: opts.NodeName, Pods: a.pods, Statuses: a.statuses, SourcesReady: opts.SourcesReady, MirrorsSeen: opts.MirrorsSeen,
			Recorder: opts.Recorder, Registry: opts.Registry, Logger: opts.Logger, Clock: opts.Clock,
		})
		if err != nil {
			return nil, err
		}
		if opts.Registry != nil {
			if err := a.api.RegisterMirrorMetrics(opts.Registry, a.listed); err != nil {
				return nil, fmt.Errorf("mirror metrics: %w", err)
			}
		}
	}
	a.ckpt, err = keeper.New(keeper.Options{Store: opts.Checkpoint, Registry: opts.Registry, Logger: log.WithName("checkpoint"), Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	a.adoption = newAdoptionRuntime(opts.Runtime, func(uid types.UID, running int) {
		m.adopted.Inc()
		a.timeline.Record(uid, timeline.KindWorker, "adopted: %d running container(s) from before the restart kept", running)
	})
	a.pleg, err = pleg.New(pleg.Options{
		Runtime: opts.Runtime, Interval: opts.RelistInterval, Logger: opts.Logger, Clock: opts.Clock,
		ContainerPID: opts.Runtime.ContainerPID, Registry: opts.Registry,
	})
	if err != nil {
		return nil, err
	}
	a.prober, err = prober.New(prober.Options{Exec: opts.Runtime, Registry: opts.ProbeRegistry, Logger: log, Clock: opts.Clock})
	if err != nil {
		return nil, fmt.Errorf("prober: %w", err)
	}
	desired := func(uid types.UID) bool {
		_, ok := a.pods.PodByUID(uid)
		return ok
	}
	s := &syncer{
		rt: a.adoption, vols: opts.Volumes, cache: a.pleg.Cache(), statuses: a.statuses,
		timeline: a.timeline, events: a.events, hostIPs: opts.NodeIPs, desired: desired, finished: a.podFinished(opts.Objects),
		clock: opts.Clock, log: log.WithName("syncer"), alloc: opts.Allocation,
		pods: map[types.UID]*podRecord{}, probes: a.prober, hooks: a.prober.Hooks(a.adoption, a.timeline, log.WithName("syncer")), deadlines: newDeadlines(), evictions: newEvictions(), metrics: m.kubelet,
	}
	a.workers, err = podworkers.New(podworkers.Options{
		Syncer: a.ckpt.Syncer(s, a.statuses.Status, desired), Clock: opts.Clock, Logger: opts.Logger.WithName("podworkers"),
		ResyncInterval: opts.SyncFrequency, Metrics: m,
	})
	if err != nil {
		return nil, err
	}
	a.loop = &syncLoop{
		updates: opts.Updates, events: a.pleg.Events(), pods: a.pods, workers: a.workers,
		probeUpdates: a.prober.Updates(), probes: a.prober, deadlines: s.deadlines,
		timeline: a.timeline, clock: opts.Clock, due: opts.DueInterval, ckpt: a.ckpt,
		admission: a.admission, statuses: a.statuses, api: a.api, podEvents: a.events,
		objects: opts.Objects, objectChanges: newObjectChanges(), stops: a.stops,
		apiAdmission: &apiAdmission{waiting: map[types.UID]*corev1.Pod{}},
		sysctls:      opts.Sysctls,
		alloc:        opts.Allocation,
		nodeLabels:   opts.NodeLabels,
		housekeeping: opts.HousekeepingInterval, log: log.WithName("loop"),
		stall: syncLoopThreshold(opts.SyncFrequency),
		housekeeper: &housekeeper{
			pods: a.pods, workers: a.workers, rt: opts.Runtime, vols: opts.Volumes,
			statuses: a.statuses, timeline: a.timeline, sourcesReady: opts.SourcesReady,
			podsDir: filepath.Join(opts.RootDir, "pods"), retention: opts.TimelineRetention,
			clock: opts.Clock, log: log.WithName("housekeeping"), ckpt: a.ckpt, alloc: opts.Allocation,
			held:   func(uid types.UID) bool { return a.admission.IsRefused(uid) || a.loop.apiAdmission.isWaiting(uid) },
			listed: a.pleg.Pods,
		},
	}
	a.loop.handlers = newPodHandlers(a.loop)
	a.evictions = s.evictions
	a.collector = &collector{
		rt: opts.Runtime, interval: opts.GCInterval, sourcesReady: opts.SourcesReady,
		gone: func(uid types.UID) bool {
			return !desired(uid) && !a.workers.CouldHaveRunningContainers(uid)
		},
		clock: opts.Clock, log: log.WithName("gc"),
	}
	return a, nil
}

// Run runs the agent until ctx ends, then returns once every goroutine it
// started has ended. It kills no pod on its way out: what runs keeps
// running, for the next agent to adopt. It may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	a.log.Info("Starting")
	// The checkpoint's writer outlives the other parts by one last write,
	// so that what they changed on their way out is written too.
	wctx, stopWriter := context.WithCancel(context.WithoutCancel(ctx))
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		_ = a.ckpt.Run(wctx)
	}()
	defer func() {
		stopWriter()
		<-writerDone
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.workers.Run(gctx) })
	g.Go(func() error { return a.pleg.Run(gctx) })
	g.Go(func() error { return a.collector.run(gctx) })
	g.Go(func() error { return a.loop.run(gctx) })
	g.Go(func() error { return a.prober.Run(gctx) })
	err := g.Wait()
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

// APIServerBack tries every mirror pod and pod status that is not current
// now: the apiserver answers again after an outage.
func (a *Agent) APIServerBack() { a.api.Retry() }

// RunConnected keeps the mirror pods and the pod statuses in the apiserver
// current until ctx ends (apisync.Sync.Run). It needs an agent built with
// Options.Connected, and runs once the Node exists: API pods that came
// before are admitted against it.
func (a *Agent) RunConnected(ctx context.Context, conn apisync.Connection) error {
	if a.api == nil {
		return fmt.Errorf("%w: the agent was not built for connected mode", ErrInvalidOptions)
	}
	a.loop.apiAdmission.node.Store(&conn.Node)
	return a.api.Run(ctx, conn)
}
