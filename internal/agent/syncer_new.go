package agent

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Syncer is the agent's podworkers.Syncer, built before the pod workers
// that call it, and what it shares with the loop New builds over it: the
// pods' timelines, the pods the node evicts, the pods that stopped for
// good, the agent's metrics.
type Syncer struct {
	*syncer
	// index is the pods the sources want.
	index   *podmanager.Manager
	metrics *agentMetrics
	// adoption wraps the runtime the syncer uses.
	adoption *adoptionRuntime
	stops    *podStops
	api      *apisync.Sync
	objects  PodObjects
}

var _ podworkers.Syncer = (*Syncer)(nil)

// SyncerOptions configure a Syncer. Runtime, Volumes, Pods, Statuses,
// PLEG and Prober are required.
type SyncerOptions struct {
	NodeName string
	// NodeIPs are the node's IPs, primary first, at most one per family:
	// the pods' hostIPs, and the pod IPs of host-network pods.
	NodeIPs []string
	Runtime Runtime
	Volumes Volumes
	// Pods is the index of the pods the sources want; Statuses the store
	// of their statuses; the PLEG's cache the runtime's view of them.
	Pods     *podmanager.Manager
	Statuses *status.Store
	PLEG     *pleg.PLEG
	// Prober runs the probes and the lifecycle hooks.
	Prober *prober.Manager
	// API (nil in standalone mode) is told of the API pods that finished;
	// Objects (nil in standalone mode) no longer reads their ConfigMaps
	// and Secrets.
	API     *apisync.Sync
	Objects PodObjects
	// Recorder, if not nil, receives the pods' events.
	Recorder record.EventRecorder
	// Allocation remembers the resources the API pods were allocated and
	// their containers resized to (default: in memory only); the
	// runtime's ResizeRecords should be the same store.
	Allocation *allocation.Store
	// Timeline is the pods' timeline, which the prober's Steps write to as
	// well; nil makes one of TimelinePerPod entries per pod (default
	// timeline.DefaultPerPod).
	Timeline       *timeline.Log
	TimelinePerPod int
	// Registry receives the agent's metrics; nil registers none.
	Registry metrics.KubeRegistry
	Logger   logr.Logger
	Clock    clock.WithTicker
}

// NewSyncer builds the agent's syncer; the pod workers call it, and New
// builds the agent's loop over it.
func NewSyncer(opts SyncerOptions) (*Syncer, error) {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"Runtime", opts.Runtime == nil}, {"Volumes", opts.Volumes == nil}, {"Pods", opts.Pods == nil},
		{"Statuses", opts.Statuses == nil}, {"PLEG", opts.PLEG == nil}, {"Prober", opts.Prober == nil},
	} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, f.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Allocation == nil {
		opts.Allocation, _ = allocation.Open("") // in memory: nothing to read
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	log := opts.Logger.WithName("agent")
	m, err := newMetrics(opts.Registry, opts.NodeName)
	if err != nil {
		return nil, fmt.Errorf("agent metrics: %w", err)
	}
	opts.Statuses.OnPhases(m.PodPhases)
	tl := opts.Timeline
	if tl == nil {
		tl = timeline.NewWithClock(opts.TimelinePerPod, opts.Clock)
	}
	s := &Syncer{index: opts.Pods, metrics: m, stops: newPodStops(), api: opts.API, objects: opts.Objects}
	s.adoption = newAdoptionRuntime(opts.Runtime, func(uid types.UID, running int) {
		m.adopted.Inc()
		tl.Record(uid, timeline.KindWorker, "adopted: %d running container(s) from before the restart kept", running)
	})
	s.syncer = &syncer{
		rt: s.adoption, vols: opts.Volumes, cache: opts.PLEG.Cache(), statuses: opts.Statuses,
		timeline: tl, events: newPodEvents(opts.Recorder, opts.NodeName), hostIPs: opts.NodeIPs,
		desired: s.desired, finished: s.podFinished,
		clock: opts.Clock, log: log.WithName("syncer"), alloc: opts.Allocation,
		pods: map[types.UID]*podRecord{}, probes: opts.Prober, hooks: opts.Prober.Hooks(s.adoption, tl, log.WithName("syncer")),
		deadlines: newDeadlines(), evictions: newEvictions(), metrics: m.kubelet,
	}
	return s, nil
}

// WorkerMetrics are the agent's measurements of the pod workers, for
// podworkers.Options.Metrics.
func (s *Syncer) WorkerMetrics() podworkers.Metrics { return s.metrics }

// desired reports whether a source still wants the pod.
func (s *Syncer) desired(uid types.UID) bool {
	_, ok := s.index.PodByUID(uid)
	return ok
}

// podFinished is told of each pod whose containers and volumes are gone:
// an API pod reads nothing more, and may go from the apiserver once its
// deletion is asked.
func (s *Syncer) podFinished(pod *corev1.Pod) {
	if kindOf(pod) == kindAPI {
		if s.objects != nil {
			s.objects.UnregisterPod(pod)
		}
		s.api.APIPodFinished(pod)
	}
	s.stops.stopped()
}
