package app

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/containergc"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// openCheckpoint opens what the agent remembers of its static pods across
// restarts; nil with --checkpoint-file=none. An unreadable file has been
// moved aside (Open logs it) and the agent starts from its sources; a
// newer agent's file is refused, and so is starting, rather than lose
// that agent's state.
func (o *Options) openCheckpoint(log logr.Logger) (checkpoint.Store, error) {
	if o.CheckpointFile == "none" {
		return nil, nil
	}
	bolt, err := checkpoint.Open(o.CheckpointFile, checkpoint.Options{Logger: log.WithName("checkpoint")})
	if errors.Is(err, checkpoint.ErrNewerSchema) {
		// Nothing was written and no pod touched: say so, and give the
		// operator both ways out.
		return nil, fmt.Errorf("refusing to start: %w; the file and the running pods are left as they are (run the newer nodeagent that wrote it, or move the file aside, keeping it for that version, to start from the sources alone and adopt what runs)", err)
	} else if err != nil {
		return nil, fmt.Errorf("opening the checkpoint: %w", err)
	}
	return bolt, nil
}

// agentParts are what the agent is built from.
type agentParts struct {
	rt      *runtime.Runtime
	alloc   *allocation.Store
	vols    *volumes.Manager
	sources *podSources
	store   checkpoint.Store // nil: none
	events  *events          // nil: standalone mode
	from    apiObjects
	machine node.Machine
	reg     metrics.KubeRegistry
	probes  metrics.KubeRegistry
}

// agentRuns are the agent and the long-running parts built around it.
type agentRuns struct {
	agent   *agent.Agent
	workers *podworkers.PodWorkers
	pleg    *pleg.PLEG
	prober  *prober.Manager
	// keeper's writer outlives the others by one last write.
	keeper *keeper.Keeper
	// api is nil in standalone mode.
	api *apisync.Sync
	gc  *containergc.Collector
}

// parts are the agent's parts that run beside it, the checkpoint's
// writer apart.
func (r agentRuns) parts() parts {
	return parts{
		{"agent", r.agent.Run}, {"pod workers", r.workers.Run}, {"PLEG", r.pleg.Run},
		{"prober", r.prober.Run}, {"container GC", r.gc.Run},
	}
}

// newAgent builds the agent, which syncs the pods of the sources on the
// runtime, and its parts: the pod index and the status store they share,
// the PLEG, the prober, the checkpoint keeper, API sync in connected
// mode, the syncer and the pod workers that call it, the container GC.
func (o *Options) newAgent(p agentParts, log logr.Logger) (agentRuns, error) {
	// The sysctls pods may set: the safe ones this kernel namespaces, and
	// those the administrator allowed (validated).
	kernel, err := admission.KernelVersion()
	if err != nil {
		log.Error(err, "The sysctls only some kernels namespace are not taken for safe")
	}
	sysctls, err := admission.NewSysctls(o.AllowedUnsafeSysctls, kernel)
	if err != nil {
		return agentRuns{}, fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	var r agentRuns
	clk := clock.RealClock{}
	pods, statuses := podmanager.New(), status.NewStore()
	if r.pleg, err = pleg.New(pleg.Options{
		Runtime: p.rt, Interval: o.RelistInterval, ContainerPID: p.rt.ContainerPID, Registry: p.reg, Logger: log, Clock: clk,
	}); err != nil {
		return agentRuns{}, err
	}
	// The pods' timeline, which the syncer and the prober's steps write.
	tl := timeline.NewWithClock(0, clk)
	steps, err := prober.NewSteps(prober.StepsOptions{Timeline: tl, Registry: p.reg, Writes: p.events != nil, Clock: clk})
	if err != nil {
		return agentRuns{}, fmt.Errorf("probe result metrics: %w", err)
	}
	if r.prober, err = prober.New(prober.Options{Exec: p.rt, Registry: p.probes, Steps: steps, Logger: log.WithName("agent"), Clock: clk}); err != nil {
		return agentRuns{}, fmt.Errorf("prober: %w", err)
	}
	if r.keeper, err = keeper.New(keeper.Options{Store: p.store, Registry: p.reg, Logger: log.WithName("agent").WithName("checkpoint"), Clock: clk}); err != nil {
		return agentRuns{}, err
	}
	if p.events != nil {
		if r.api, err = apisync.New(apisync.Options{
			NodeName: o.NodeName, Pods: pods, Statuses: statuses, SourcesReady: p.sources.ready, MirrorsSeen: p.sources.mirrorsSeen,
			StatusWritten: steps.Written, Recorder: p.events.recorder(), Registry: p.reg, Logger: log, Clock: clk,
		}); err != nil {
			return agentRuns{}, err
		}
	}
	syncerOpts := agent.SyncerOptions{
		NodeName: o.NodeName, NodeIPs: nodeIPs(o.NodeIP), Runtime: p.rt, Volumes: p.vols,
		Pods: pods, Statuses: statuses, PLEG: r.pleg, Prober: r.prober, API: r.api, Timeline: tl,
		Recorder: p.events.recorder(), Allocation: p.alloc, Registry: p.reg, Logger: log, Clock: clk,
	}
	if p.from.objects != nil { // never a nil *Objects in an interface
		syncerOpts.Objects = p.from.objects
	}
	syncer, err := agent.NewSyncer(syncerOpts)
	if err != nil {
		return agentRuns{}, err
	}
	desired := func(uid types.UID) bool { _, ok := pods.PodByUID(uid); return ok }
	if r.workers, err = podworkers.New(podworkers.Options{
		Syncer:         r.keeper.Syncer(syncer, statuses.Status, desired),
		ResyncInterval: o.SyncFrequency, Metrics: syncer.WorkerMetrics(), Logger: log.WithName("podworkers"), Clock: clk,
	}); err != nil {
		return agentRuns{}, err
	}
	if r.gc, err = containergc.New(containergc.Options{
		Runtime: p.rt, SourcesReady: p.sources.ready,
		Gone:   func(uid types.UID) bool { return !desired(uid) && !r.workers.CouldHaveRunningContainers(uid) },
		Logger: log.WithName("agent").WithName("gc"), Clock: clk,
	}); err != nil {
		return agentRuns{}, err
	}
	if r.agent, err = agent.New(agent.Options{
		Syncer: syncer, Workers: r.workers, PLEG: r.pleg, Prober: r.prober, ProbeSteps: steps, Checkpoint: r.keeper,
		RootDir: o.RootDir, Updates: p.sources.merger.Updates(), SourcesReady: p.sources.ready, ObjectChanges: p.from.changes,
		SyncFrequency: o.SyncFrequency, HousekeepingInterval: o.HousekeepingInterval,
		Sysctls: sysctls, NodeLabels: node.Labels(o.NodeName, p.machine, o.NodeLabels),
		Logger: log, Clock: clk,
	}); err != nil {
		return agentRuns{}, err
	}
	if r.api != nil {
		if err := r.api.RegisterMirrorMetrics(p.reg, agentPods(r.agent)); err != nil {
			return agentRuns{}, fmt.Errorf("mirror metrics: %w", err)
		}
	}
	return r, nil
}

// readiness is ready once every awaited source has sent its pods and the
// agent says it is ready.
func readiness(ag *agent.Agent, sources *podSources) func() error {
	return func() error {
		if err := sources.err(); err != nil {
			return err
		}
		return ag.Ready()
	}
}
