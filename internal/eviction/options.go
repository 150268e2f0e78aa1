package eviction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"
)

// Options configure a Manager.
type Options struct {
	// Hard thresholds evict at once; Soft ones once met for their grace
	// period (SoftGracePeriods, by signal), giving the pod at most
	// MaxPodGracePeriod seconds to stop (a negative one: the pod's own,
	// as the kubelet's). MinimumReclaim is how much more
	// than a threshold's bound must be available again before the
	// threshold counts as resolved.
	Hard, Soft        Thresholds
	SoftGracePeriods  map[string]time.Duration
	MaxPodGracePeriod int64
	MinimumReclaim    Thresholds
	// Interval is how often the signals are observed (default 10s, the
	// kubelet's). PressureTransition is how long a signal stays under
	// pressure (Manager.Pressure) after it was last met (default 5m).
	Interval           time.Duration
	PressureTransition time.Duration

	// Observe reads the signals (Observer.Observe).
	Observe func(context.Context) (Observation, error)
	// PodsMemoryDir is the pods' cgroup in the memory controller: the
	// kernel is asked to say when its usage crosses the threshold, so
	// that memory pressure is acted on at once rather than at the next
	// poll. "" polls only.
	PodsMemoryDir string
	// Pods are the pods that may still run; Usage what each of them uses.
	// A pass lists the pods once and measures them at most once.
	Pods  func() []*corev1.Pod
	Usage func(context.Context, []*corev1.Pod) (map[types.UID]PodUsage, error)
	// ReclaimDisk frees what the node itself holds on disk (unused
	// images, dead containers) before a pod is evicted for disk; nil
	// frees nothing.
	ReclaimDisk func(context.Context) error
	// Evict stops the pod within grace seconds; it ends Failed with
	// reason Evicted and the message. It reports whether the pod is
	// being evicted.
	Evict func(pod *corev1.Pod, message string, grace int64) bool
	// Reclaimed tells whether what the pod held is released: its
	// containers, volumes and cgroup gone.
	Reclaimed func(types.UID) bool

	Registry metrics.KubeRegistry
	Logger   logr.Logger
	Clock    clock.WithTicker
}

// PodUsage is what a pod uses, in bytes.
type PodUsage struct {
	// Memory is the pod's working set, ContainerMemory each container's.
	Memory          int64
	ContainerMemory map[string]int64
	// ContainerEphemeral is each container's writable layer and logs;
	// Volumes each emptyDir's on disk.
	ContainerEphemeral map[string]int64
	Volumes            map[string]int64
}

// Defaults of Options, as the kubelet's.
const (
	DefaultInterval           = 10 * time.Second
	DefaultPressureTransition = 5 * time.Minute
)

// ErrInvalidOptions is wrapped by the error of options that are not valid.
var ErrInvalidOptions = errors.New("invalid eviction options")

func (o *Options) setDefaults() {
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.PressureTransition == 0 {
		o.PressureTransition = DefaultPressureTransition
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// Validate reports every problem of the policy at once: the thresholds,
// grace periods and interval.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	for signal := range o.Soft {
		if _, ok := o.SoftGracePeriods[signal]; !ok {
			bad("the soft threshold of %s has no grace period", signal)
		}
	}
	for signal := range o.SoftGracePeriods {
		if _, ok := o.Soft[signal]; !ok {
			bad("%s has a grace period but no soft threshold", signal)
		}
	}
	if o.Interval < 0 {
		bad("Interval is negative (%v)", o.Interval)
	}
	if o.PressureTransition < 0 {
		bad("PressureTransition is negative (%v)", o.PressureTransition)
	}
	return errors.Join(errs...)
}

// validate reports every invalid option of a Manager at once: the
// functions it acts through that are missing, and the policy's problems
// (Validate).
func (o Options) validate() error {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"Observe", o.Observe == nil}, {"Pods", o.Pods == nil}, {"Usage", o.Usage == nil},
		{"Evict", o.Evict == nil}, {"Reclaimed", o.Reclaimed == nil},
	} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, f.name))
		}
	}
	return errors.Join(append(errs, o.Validate())...)
}
