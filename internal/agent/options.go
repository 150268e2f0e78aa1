package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrInvalidOptions is returned by New for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid agent options")

// ErrAlreadyRunning is returned by a second call of Run.
var ErrAlreadyRunning = errors.New("agent already running")

// The defaults of the Options the agent itself uses. Those it passes on are
// defaulted by the part that uses them: SyncFrequency by podworkers
// (DefaultResyncInterval), RelistInterval by pleg (DefaultInterval),
// TimelinePerPod by timeline (DefaultPerPod).
const (
	DefaultHousekeepingInterval = 2 * time.Second
	DefaultGCInterval           = time.Minute
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
	GarbageCollect(ctx context.Context, deleted func(types.UID) bool) error
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

// Options configure an Agent. NodeName is informational; Runtime, Volumes,
// Updates, SourcesReady and RootDir are required.
type Options struct {
	NodeName string
	// NodeIPs are the node's IPs, primary first, at most one per family:
	// the pods' hostIPs, and the pod IPs of host-network pods.
	NodeIPs []string
	// RootDir is the agent's state directory: pod directories live under
	// <RootDir>/pods/<uid>, as the volumes package lays them out.
	RootDir string
	Runtime Runtime
	Volumes Volumes
	// Updates is the merged config stream (config.Merger.Updates() in
	// Incremental mode).
	Updates <-chan podtypes.PodUpdate
	// SourcesReady reports whether every source has delivered its pods;
	// orphans are not killed before it does.
	SourcesReady func() bool
	// SyncFrequency is how often a healthy pod is synced again (default
	// podworkers.DefaultResyncInterval); RelistInterval the PLEG's period
	// (default pleg.DefaultInterval); HousekeepingInterval housekeeping's
	// (default DefaultHousekeepingInterval).
	SyncFrequency        time.Duration
	RelistInterval       time.Duration
	HousekeepingInterval time.Duration
	// GCInterval is the period of the garbage collection of dead
	// containers (default 1m).
	GCInterval time.Duration
	// DueInterval is how often the work queue is polled for pods due a
	// resync or at the end of a back-off, and for pods whose active
	// deadline has passed (default 1s).
	DueInterval time.Duration
	// TimelinePerPod bounds each pod's timeline (default
	// timeline.DefaultPerPod entries);
	// TimelineRetention is how long the timeline of a pod that is gone is
	// kept (default 10m).
	TimelinePerPod    int
	TimelineRetention time.Duration
	// Checkpoint is where the agent remembers its static pods and their
	// lifecycle across restarts (see Restore); nil remembers nothing.
	Checkpoint checkpoint.Store
	// Connected builds the parts that keep the apiserver current (mirror
	// pods, pod statuses); RunConnected runs them once the Node exists.
	// MirrorsSeen reports whether the apiserver source has sent its pods
	// (the mirror pods) once.
	// Recorder, if not nil, receives the pods' events and the Node's
	// events about static pods that cannot be mirrored.
	Connected   bool
	MirrorsSeen func() bool
	Recorder    record.EventRecorder
	// Objects, in connected mode, is told which API pods exist, so that
	// what they reference is read for them (see ObjectChanged).
	Objects PodObjects
	// Sysctls admits the sysctls of every pod, static or not (default:
	// the safe sysctls namespaced on every kernel, and nothing else).
	Sysctls *admission.Sysctls
	// Allocation remembers the resources the API pods were allocated and
	// their containers resized to (default: in memory only); the
	// runtime's ResizeRecords should be the same store.
	Allocation *allocation.Store
	// NodeLabels are the labels the node registers with (node.Labels):
	// a static pod's nodeSelector and required node affinity are matched
	// against them while the Node is not known, as the kubelet matches
	// them against its initial node.
	NodeLabels map[string]string
	// Registry receives the agent's metrics, ProbeRegistry the prober's
	// (which the kubelet serves apart, on /metrics/probes); nil registers
	// none.
	Registry      metrics.KubeRegistry
	ProbeRegistry metrics.KubeRegistry
	Logger        logr.Logger
	Clock         clock.WithTicker
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
		{"Runtime", o.Runtime == nil}, {"Volumes", o.Volumes == nil}, {"Updates", o.Updates == nil},
		{"SourcesReady", o.SourcesReady == nil}, {"RootDir", o.RootDir == ""},
	} {
		if f.missing {
			bad("%s is required", f.name)
		}
	}
	for name, d := range map[string]time.Duration{
		"SyncFrequency": o.SyncFrequency, "RelistInterval": o.RelistInterval,
		"HousekeepingInterval": o.HousekeepingInterval, "GCInterval": o.GCInterval,
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
	def(&o.GCInterval, DefaultGCInterval)
	def(&o.DueInterval, DefaultDueInterval)
	def(&o.TimelineRetention, DefaultTimelineRetention)
	if o.Sysctls == nil {
		var err error
		if o.Sysctls, err = admission.NewSysctls(nil, nil); err != nil {
			return o, err
		}
	}
	if o.Allocation == nil {
		o.Allocation, _ = allocation.Open("") // in memory: nothing to read
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o, nil
}
