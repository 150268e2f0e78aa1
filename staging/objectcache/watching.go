package objectcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Defaults of the watching strategy. The idle bound is five of the agent's
// resync periods: an object mounted as a volume is read on every resync of
// its pod, so only objects read once (for environment variables) go idle.
const (
	DefaultResyncPeriod = time.Minute
	DefaultSyncTimeout  = time.Second
	DefaultRetryInitial = 800 * time.Millisecond
	DefaultRetryMax     = 30 * time.Second
)

// WatchingOptions configure a WatchingManager. Only Client is required.
type WatchingOptions struct {
	// Client lists and watches the objects, normally as the node's
	// identity: the Node authorizer lets a node list and watch, by name, the
	// objects its pods reference.
	Client kubernetes.Interface
	// ResyncPeriod is how often the agent syncs a running pod, and so reads
	// its objects again; idle watches are looked for this often.
	// Default: DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// MaxIdle is how long a watched object may go unread before its watch
	// is stopped; the next Get starts it again. Default: 5 * ResyncPeriod.
	MaxIdle time.Duration
	// SyncTimeout bounds how long Get waits for an object's first list.
	// Default: DefaultSyncTimeout.
	SyncTimeout time.Duration
	// RetryInitial and RetryMax bound the jittered exponential backoff
	// between failed lists and watches. Defaults: DefaultRetryInitial and
	// DefaultRetryMax.
	RetryInitial, RetryMax time.Duration
	// Clock times idleness, backoff and SyncTimeout. Default: the real
	// clock.
	Clock clock.WithTicker
	// Logger receives watch starts, stops and failures. Default: none.
	Logger logr.Logger
	// Metrics receives active watches, Gets, hits, misses and propagation
	// delays. Default: none.
	Metrics *Metrics
	// OnChange, if set, is called after a watched object was created,
	// changed or deleted, once Get returns its new state, so that the pods
	// using it can be synced at once instead of at their next resync. It
	// is called from the object's watch goroutine and must not block.
	OnChange func(namespace, name string)
}

// withDefaults reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field, else fills in the defaults.
func (o WatchingOptions) withDefaults() (WatchingOptions, error) {
	var errs []error
	if o.Client == nil {
		errs = append(errs, fmt.Errorf("%w: Client is required", ErrInvalidOptions))
	}
	for name, d := range map[string]time.Duration{
		"ResyncPeriod": o.ResyncPeriod, "MaxIdle": o.MaxIdle, "SyncTimeout": o.SyncTimeout,
		"RetryInitial": o.RetryInitial, "RetryMax": o.RetryMax,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, name, d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	o.ResyncPeriod = cmp.Or(o.ResyncPeriod, DefaultResyncPeriod)
	o.MaxIdle = cmp.Or(o.MaxIdle, 5*o.ResyncPeriod)
	o.SyncTimeout = cmp.Or(o.SyncTimeout, DefaultSyncTimeout)
	o.RetryInitial = cmp.Or(o.RetryInitial, DefaultRetryInitial)
	o.RetryMax = max(cmp.Or(o.RetryMax, DefaultRetryMax), o.RetryInitial)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o, nil
}

// WatchingManager is the watch strategy: one list and watch per referenced
// object, by name, started when the first registered pod references it and
// stopped when the last one goes. An immutable object is listed once and
// never watched; a watch whose object is not read for MaxIdle is stopped
// until the next Get. Failed lists and watches are retried with backoff.
//
// Watches run under the context given to Run; objects registered before
// Run are watched from when it starts. It is safe for concurrent use.
type WatchingManager[T Object] struct {
	registry *registry
	store    *watchStore[T]
}

// NewWatching returns a WatchingManager for kind, e.g.
// NewWatching(Secrets(), opts). Call Run to start it.
func NewWatching[T Object](kind Kind[T], opts WatchingOptions) (*WatchingManager[T], error) {
	opts, err := opts.withDefaults()
	if err := errors.Join(kind.check(), err); err != nil {
		return nil, err
	}
	store := &watchStore[T]{
		kind:    kind,
		opts:    opts,
		log:     opts.Logger.WithValues("kind", kind.resource.String()),
		metrics: opts.Metrics.forKind(kind.resource.String()),
		items:   map[objectKey]*watchItem[T]{},
		done:    make(chan struct{}),
	}
	return &WatchingManager[T]{registry: newRegistry(kind.references, store), store: store}, nil
}

// Run starts the watches of the objects referenced so far, stops idle
// watches every ResyncPeriod, and blocks until ctx ends; then it stops every
// watch and returns nil once all of them have ended. A second call returns
// ErrAlreadyRunning.
func (m *WatchingManager[T]) Run(ctx context.Context) error { return m.store.run(ctx) }

// RegisterPod records the objects the pod references, starting a watch for
// each one no other pod references (and restarting idle ones). Registering
// a pod again applies only the difference.
func (m *WatchingManager[T]) RegisterPod(pod *corev1.Pod) { m.registry.register(pod) }

// UnregisterPod drops the pod's references, stopping the watch of every
// object no pod references any more.
func (m *WatchingManager[T]) UnregisterPod(pod *corev1.Pod) { m.registry.unregister(pod) }

// Get returns the object as the watch last saw it. Before the object's
// first list completes it waits up to SyncTimeout (or ctx), then fails with
// ErrNotSynced wrapping the last list or watch error. An object that does
// not exist yields a NotFound error like the apiserver's; one no registered
// pod references yields ErrNotRegistered. The object is shared: do not
// modify it.
func (m *WatchingManager[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	return m.store.get(ctx, objectKey{namespace, name})
}

// ActiveWatches returns how many objects are being watched: referenced,
// listed and found mutable (or missing), and not idle. A watch that failed
// and waits to be re-established still counts; an object whose first list
// has not completed does not. The active_watches metric has the same value.
func (m *WatchingManager[T]) ActiveWatches() int { return m.store.activeWatches() }
