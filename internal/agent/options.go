package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// ErrInvalidOptions is returned by New for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid agent options")

// ErrAlreadyRunning is returned by a second call of Run.
var ErrAlreadyRunning = errors.New("agent already running")

// The defaults of the Options the agent itself uses. Those of the parts
// it is given are their own: the resync by podworkers
// (DefaultResyncInterval), the relist by pleg (DefaultInterval), the
// timelines' bound by timeline (DefaultPerPod).
const (
	DefaultHousekeepingInterval = 2 * time.Second
	DefaultDueInterval          = time.Second
	DefaultTimelineRetention    = 10 * time.Minute
)

// Runtime is what the agent needs of the container runtime;
// *runtime.Runtime satisfies it.
type Runtime interface {
	SyncPod(ctx context.Context, pod *corev1.Pod, mounts runtime.ContainerMounts, status *runtime.PodStatus, hooks runtime.SyncHooks) (runtime.SyncResult, error)
	KillPod(ctx context.Context, pod *corev1.Pod, running runtime.Pod, gracePeriodOverride *int64) error
	StopPod(ctx context.Context, pod *corev1.Pod, running runtime.Pod, gracePeriodOverride *int64, preStop runtime.PreStopHook) error
	GetPodStatus(ctx context.Context, uid types.UID) (*runtime.PodStatus, error)
	GetPods(ctx context.Context) ([]*runtime.Pod, error)
	// ContainerPID serves the PLEG's exit watch.
	ContainerPID(ctx context.Context, id string) (int, error)
	RemovePodLogDir(pod *corev1.Pod) error
	// StopContainer and ExecSync serve the probes.
	StopContainer(ctx context.Context, id string, grace int64) error
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (runtime.ExecResult, error)
}

// Volumes is what the agent needs of the volume manager; *volumes.Manager
// satisfies it.
type Volumes interface {
	Setup(ctx context.Context, pod *corev1.Pod) (runtime.ContainerMounts, error)
	Cleanup(uid types.UID) error
}

// Options configure an Agent. Syncer, Workers, PLEG, Prober, Updates,
// SourcesReady and RootDir are required.
type Options struct {
	// Syncer is the agent's syncer (NewSyncer); Workers the pod workers
	// that call it, through the checkpoint keeper's wrapper
	// (keeper.Keeper.Syncer).
	Syncer  *Syncer
	Workers *podworkers.PodWorkers
	// PLEG's events and Prober's results are syncs of the loop; both run
	// beside the agent.
	PLEG   *pleg.PLEG
	Prober *prober.Manager
	// ProbeSteps, if not nil, times each probe result's way to the
	// statuses (the Prober's Steps).
	ProbeSteps *prober.Steps
	// Checkpoint keeps the static pods and their lifecycle across restarts
	// (see Restore); a nil Keeper, or one without a store, keeps nothing.
	Checkpoint *keeper.Keeper
	// RootDir is the agent's state directory: pod directories live under
	// <RootDir>/pods/<uid>, as the volumes package lays them out.
	RootDir string
	// Updates is the merged config stream (config.Merger.Updates() in
	// Incremental mode).
	Updates <-chan podtypes.PodUpdate
	// SourcesReady reports whether every source has delivered its pods;
	// orphans are not killed before it does.
	SourcesReady func() bool
	// SyncFrequency is how often a healthy pod is synced again (default
	// podworkers.DefaultResyncInterval; the workers' resync): the loop
	// counts as stuck after twice that. HousekeepingInterval is
	// housekeeping's period (default DefaultHousekeepingInterval).
	SyncFrequency        time.Duration
	HousekeepingInterval time.Duration
	// DueInterval is how often the work queue is polled for pods due a
	// resync or at the end of a back-off, and for pods whose active
	// deadline has passed (default 1s).
	DueInterval time.Duration
	// TimelineRetention is how long the timeline of a pod that is gone is
	// kept (default 10m).
	TimelineRetention time.Duration
	// ObjectChanges are the changes of the API pods' ConfigMaps and
	// Secrets (podobjects.Objects.Run tells them): the pods that use them
	// are synced. Default: none.
	ObjectChanges *podobjects.Changes
	// Sysctls admits the sysctls of every pod, static or not (default:
	// the safe sysctls namespaced on every kernel, and nothing else).
	Sysctls *admission.Sysctls
	// NodeLabels are the labels the node registers with (node.Labels):
	// a static pod's nodeSelector and required node affinity are matched
	// against them while the Node is not known, as the kubelet matches
	// them against its initial node.
	NodeLabels map[string]string
	Logger     logr.Logger
	Clock      clock.WithTicker
}

// withDefaults reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field, else fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...)))
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"Syncer", o.Syncer == nil}, {"Workers", o.Workers == nil}, {"PLEG", o.PLEG == nil}, {"Prober", o.Prober == nil},
		{"Updates", o.Updates == nil}, {"SourcesReady", o.SourcesReady == nil}, {"RootDir", o.RootDir == ""},
	} {
		if f.missing {
			bad("%s is required", f.name)
		}
	}
	for name, d := range map[string]time.Duration{
		"SyncFrequency": o.SyncFrequency, "HousekeepingInterval": o.HousekeepingInterval,
		"DueInterval": o.DueInterval, "TimelineRetention": o.TimelineRetention,
	} {
		if d < 0 {
			bad("%s is negative (%v)", name, d)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.HousekeepingInterval, DefaultHousekeepingInterval)
	def(&o.DueInterval, DefaultDueInterval)
	def(&o.TimelineRetention, DefaultTimelineRetention)
	if o.ObjectChanges == nil {
		o.ObjectChanges = podobjects.NewChanges()
	}
	if o.Sysctls == nil {
		var err error
		if o.Sysctls, err = admission.NewSysctls(nil, nil); err != nil {
			return o, err
		}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o, nil
}
