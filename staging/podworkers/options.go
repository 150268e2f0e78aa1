package podworkers

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// The kubelet's defaults.
const (
	DefaultResyncInterval         = time.Minute
	DefaultBackoffPeriod          = 10 * time.Second
	DefaultNetworkNotReadyBackoff = time.Second
	// DefaultJitterFactor is the most the default Jitter adds, as a
	// fraction of the delay.
	DefaultJitterFactor = 0.5
)

// Options configures PodWorkers. Only Syncer is required.
type Options struct {
	// Syncer does the work for each pod.
	Syncer Syncer
	// Clock times Syncer calls and the work queue. Default: the real clock.
	Clock clock.PassiveClock
	// Logger receives lifecycle changes and sync errors; the Syncer's
	// context carries it too, with the pod's name and UID. Default: none.
	Logger logr.Logger
	// ResyncInterval is how long after a successful SyncPod the pod is due
	// again. Default: DefaultResyncInterval.
	ResyncInterval time.Duration
	// BackoffPeriod is how long after a failed Syncer call the pod is due
	// again; never more than ResyncInterval. Default: DefaultBackoffPeriod.
	BackoffPeriod time.Duration
	// NetworkNotReadyBackoff replaces BackoffPeriod for failures that wrap
	// ErrNetworkNotReady or ErrTransient. Default:
	// DefaultNetworkNotReadyBackoff.
	NetworkNotReadyBackoff time.Duration
	// Jitter lengthens each delay of the work queue, so that pods synced
	// together drift apart instead of hitting the runtime at the same
	// instant forever. Default: adds a random 0 to DefaultJitterFactor.
	Jitter func(time.Duration) time.Duration
	// Metrics receives worker phases, sync durations and queue depth.
	// Default: NoopMetrics.
	Metrics Metrics
}

// withDefaults reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field, else fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Syncer == nil {
		errs = append(errs, fmt.Errorf("%w: Syncer is required", ErrInvalidOptions))
	}
	for name, d := range map[string]time.Duration{
		"ResyncInterval": o.ResyncInterval, "BackoffPeriod": o.BackoffPeriod,
		"NetworkNotReadyBackoff": o.NetworkNotReadyBackoff,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, name, d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	o.ResyncInterval = cmp.Or(o.ResyncInterval, DefaultResyncInterval)
	o.BackoffPeriod = min(cmp.Or(o.BackoffPeriod, DefaultBackoffPeriod), o.ResyncInterval)
	o.NetworkNotReadyBackoff = cmp.Or(o.NetworkNotReadyBackoff, DefaultNetworkNotReadyBackoff)
	if o.Jitter == nil {
		o.Jitter = defaultJitter
	}
	if o.Metrics == nil {
		o.Metrics = NoopMetrics{}
	}
	return o, nil
}

func defaultJitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*DefaultJitterFactor*float64(d)) // #nosec G404 -- jitter spreads retries; it guards no secret
}
