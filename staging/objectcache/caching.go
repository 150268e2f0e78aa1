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

// DefaultTTL is how long the caching strategy serves an object before it
// reads it again, unless the node's annotation says otherwise.
const DefaultTTL = time.Minute

// CachingOptions configure a CachingManager. Only Client is required.
type CachingOptions struct {
	// Client reads the objects, normally as the node's identity.
	Client kubernetes.Interface
	// TTL is how long an object read from the apiserver is served before
	// it is read again. Default: DefaultTTL.
	TTL time.Duration
	// NodeTTL, if set, returns the TTL the node asks for; when ok, it
	// replaces TTL. It is called on every Get, so it should read a cache:
	// typically TTLFromNode of the Node from an informer. Default: none.
	NodeTTL func() (ttl time.Duration, ok bool)
	// Clock times the TTL. Default: the real clock.
	Clock clock.PassiveClock
	// Logger receives read failures that were answered from the cache.
	// Default: none.
	Logger logr.Logger
	// Metrics receives Gets, hits, misses and propagation delays.
	// Default: none.
	Metrics *Metrics
}

// withDefaults reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field, else fills in the defaults.
func (o CachingOptions) withDefaults() (CachingOptions, error) {
	var errs []error
	if o.Client == nil {
		errs = append(errs, fmt.Errorf("%w: Client is required", ErrInvalidOptions))
	}
	if o.TTL < 0 {
		errs = append(errs, fmt.Errorf("%w: TTL is negative (%v)", ErrInvalidOptions, o.TTL))
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	o.TTL = cmp.Or(o.TTL, DefaultTTL)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o, nil
}

// CachingManager is the TTL strategy: an object is read from the apiserver
// on the first Get, served from memory for the TTL, then read again; every
// registration of a pod invalidates the objects it references, so a new or
// changed pod never starts from stale data. It holds no watch and starts
// no goroutine. It is safe for concurrent use.
type CachingManager[T Object] struct {
	registry *registry
	store    *ttlStore[T]
}

// NewCaching returns a CachingManager for kind, e.g.
// NewCaching(ConfigMaps(), opts).
func NewCaching[T Object](kind Kind[T], opts CachingOptions) (*CachingManager[T], error) {
	opts, err := opts.withDefaults()
	if err := errors.Join(kind.check(), err); err != nil {
		return nil, err
	}
	ttl, nodeTTL := opts.TTL, opts.NodeTTL
	store := &ttlStore[T]{
		kind:    kind,
		client:  opts.Client,
		clock:   opts.Clock,
		log:     opts.Logger.WithValues("kind", kind.resource.String()),
		metrics: opts.Metrics.forKind(kind.resource.String()),
		entries: map[objectKey]*ttlEntry[T]{},
		ttl: func() time.Duration {
			if nodeTTL != nil {
				if d, ok := nodeTTL(); ok {
					return d
				}
			}
			return ttl
		},
	}
	return &CachingManager[T]{registry: newRegistry(kind.references, store), store: store}, nil
}

// RegisterPod records the objects the pod references and invalidates them.
// Registering a pod again applies only the difference to the reference
// counts.
func (m *CachingManager[T]) RegisterPod(pod *corev1.Pod) { m.registry.register(pod) }

// UnregisterPod drops the pod's references; objects no pod references any
// more are forgotten.
func (m *CachingManager[T]) UnregisterPod(pod *corev1.Pod) { m.registry.unregister(pod) }

// Get returns the object, read from the apiserver if the cached copy is
// older than the TTL or was invalidated. An object that does not exist
// yields the apiserver's NotFound (cached like an object); an object no
// registered pod references yields ErrNotRegistered. If a refresh fails,
// the last copy read is returned. The object is shared: do not modify it.
func (m *CachingManager[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	return m.store.get(ctx, objectKey{namespace, name})
}
