package podobjects

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/tokens"
	"github.com/nodeagent/nodeagent/staging/objectcache"
)

// ErrNotConnected: the agent has no client for the apiserver yet.
var ErrNotConnected = errors.New("not connected to the apiserver yet")

// Strategy is how ConfigMap and Secret changes are detected.
type Strategy string

// The strategies, named as the kubelet names them.
const (
	// Watch watches each referenced mutable object by name.
	Watch Strategy = "Watch"
	// Cache reads an object when asked and serves it for a TTL.
	Cache Strategy = "Cache"
	// Get reads the object every time it is asked for.
	Get Strategy = "Get"
)

// ParseStrategy reads a --config-map-and-secret-change-detection-strategy
// value.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(s); st {
	case Watch, Cache, Get:
		return st, nil
	}
	return "", fmt.Errorf("unknown change detection strategy %q: want %s, %s or %s", s, Watch, Cache, Get)
}

// Listener is told which pods to sync because of their objects; Changes
// is one, for the agent. Its methods must not block.
type Listener interface {
	// ObjectChanged is called, with the Watch strategy, after a referenced
	// ConfigMap (secret false) or Secret (secret true) was created,
	// changed or deleted.
	ObjectChanged(secret bool, namespace, name string)
	// ObjectsReady is called once the apiserver lets the node read the
	// objects of a registered pod (see authorize.go), as its reads failed
	// until then, and when one of its tokens is due a refresh
	// (refresh.go).
	ObjectsReady(types.UID)
}

// Options configure an Objects.
type Options struct {
	Strategy Strategy
	// Metrics and TokenMetrics receive the caches' and the tokens'
	// metrics; nil: none.
	Metrics      *objectcache.Metrics
	TokenMetrics *tokens.Metrics
	Logger       logr.Logger
	Clock        clock.WithTicker
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid pod objects options")

// getter is what a strategy offers for one kind.
type getter[T any] interface {
	RegisterPod(*corev1.Pod)
	UnregisterPod(*corev1.Pod)
	Get(ctx context.Context, namespace, name string) (T, error)
}

// Objects is safe for concurrent use.
type Objects struct {
	opts Options
	log  logr.Logger

	mu         sync.RWMutex
	configMaps getter[*corev1.ConfigMap]
	secrets    getter[*corev1.Secret]
	tokens     *tokens.Manager
	node       func(context.Context) (*corev1.Node, error)
	client     kubernetes.Interface
	listener   Listener
	runCtx     context.Context
	wg         sync.WaitGroup
	// pods are the registered pods; those the apiserver lets the node read
	// for (authorized) are given to the caches.
	pods        map[types.UID]*corev1.Pod
	authorized  map[types.UID]bool
	authorizing map[types.UID]bool
	// stopped is set once Run's context has ended: no goroutine starts.
	stopped bool
}

// New returns an Objects that reads nothing until Run.
func New(opts Options) (*Objects, error) {
	if _, err := ParseStrategy(string(opts.Strategy)); err != nil {
		return nil, fmt.Errorf("%w: Strategy: %w", ErrInvalidOptions, err)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Objects{opts: opts, log: opts.Logger.WithName("pod-objects"),
		pods: map[types.UID]*corev1.Pod{}, authorized: map[types.UID]bool{}, authorizing: map[types.UID]bool{}}, nil
}

// Run reads objects with client, the node's, until ctx ends; node
// returns the Node, for its allocatable resources; l (nil: nobody) is
// told which pods to sync. It may be called once.
func (o *Objects) Run(ctx context.Context, client kubernetes.Interface, node func(context.Context) (*corev1.Node, error), l Listener) error {
	var cms getter[*corev1.ConfigMap]
	var secrets getter[*corev1.Secret]
	var runs []func(context.Context) error
	switch o.opts.Strategy {
	case Watch:
		cw, err := objectcache.NewWatching(objectcache.ConfigMaps(), objectcache.WatchingOptions{
			Client: client, Logger: o.log, Metrics: o.opts.Metrics, Clock: o.opts.Clock,
			OnChange: func(ns, name string) { o.changed(false, ns, name) },
		})
		if err != nil {
			return err
		}
		sw, err := objectcache.NewWatching(objectcache.Secrets(), objectcache.WatchingOptions{
			Client: client, Logger: o.log, Metrics: o.opts.Metrics, Clock: o.opts.Clock,
			OnChange: func(ns, name string) { o.changed(true, ns, name) },
		})
		if err != nil {
			return err
		}
		cms, secrets, runs = cw, sw, []func(context.Context) error{cw.Run, sw.Run}
	case Cache:
		// The TTL is the one the Node's node.alpha.kubernetes.io/ttl
		// annotation asks for, as under the kubelet.
		ttl := func() (time.Duration, bool) {
			n, err := node(ctx)
			if err != nil {
				return 0, false
			}
			return objectcache.TTLFromNode(n)
		}
		cc, err := objectcache.NewCaching(objectcache.ConfigMaps(), objectcache.CachingOptions{Client: client, NodeTTL: ttl, Logger: o.log, Metrics: o.opts.Metrics, Clock: o.opts.Clock})
		if err != nil {
			return err
		}
		sc, err := objectcache.NewCaching(objectcache.Secrets(), objectcache.CachingOptions{Client: client, NodeTTL: ttl, Logger: o.log, Metrics: o.opts.Metrics, Clock: o.opts.Clock})
		if err != nil {
			return err
		}
		cms, secrets = cc, sc
	case Get:
		cms = fetcher[*corev1.ConfigMap]{get: func(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
			return client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		}}
		secrets = fetcher[*corev1.Secret]{get: func(ctx context.Context, ns, name string) (*corev1.Secret, error) {
			return client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		}}
	}
	tm, err := tokens.New(tokens.Options{Client: client, Clock: o.opts.Clock, Logger: o.log, Metrics: o.opts.TokenMetrics})
	if err != nil {
		return err
	}
	o.mu.Lock()
	if o.configMaps != nil {
		o.mu.Unlock()
		return errors.New("podobjects: Run called twice")
	}
	o.configMaps, o.secrets, o.tokens, o.node, o.client, o.listener, o.runCtx = cms, secrets, tm, node, client, l, ctx
	for _, pod := range o.pods {
		o.startAuthorizeLocked(pod)
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.refreshTokens(ctx)
	}()
	o.mu.Unlock()
	defer o.wg.Wait()
	errs := make(chan error, len(runs))
	for _, run := range runs {
		go func() { errs <- run(ctx) }()
	}
	<-ctx.Done()
	o.mu.Lock()
	o.stopped = true
	o.mu.Unlock()
	var err2 error
	for range runs {
		err2 = errors.Join(err2, <-errs)
	}
	return err2
}

func (o *Objects) changed(secret bool, ns, name string) {
	if o.listener != nil {
		o.listener.ObjectChanged(secret, ns, name)
	}
}

// RegisterPod records the objects pod references; call it whenever an API
// pod is added or changed.
func (o *Objects) RegisterPod(pod *corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pods[pod.UID] = pod
	switch {
	case o.configMaps == nil:
	case o.authorized[pod.UID]:
		o.configMaps.RegisterPod(pod)
		o.secrets.RegisterPod(pod)
	default:
		o.startAuthorizeLocked(pod)
	}
}

// UnregisterPod forgets what pod references, and its tokens.
func (o *Objects) UnregisterPod(pod *corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.pods, pod.UID)
	if o.authorized[pod.UID] {
		delete(o.authorized, pod.UID)
		o.configMaps.UnregisterPod(pod)
		o.secrets.UnregisterPod(pod)
		o.tokens.DeletePod(pod.UID)
	}
}

// ConfigMap returns the ConfigMap namespace/name, which a registered pod
// references. A missing one yields the apiserver's NotFound.
func (o *Objects) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	o.mu.RLock()
	g := o.configMaps
	o.mu.RUnlock()
	return read(ctx, o, g, false, namespace, name)
}

// Secret returns the Secret namespace/name, which a registered pod
// references. A missing one yields the apiserver's NotFound.
func (o *Objects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	o.mu.RLock()
	g := o.secrets
	o.mu.RUnlock()
	return read(ctx, o, g, true, namespace, name)
}

// read gets namespace/name from g once Run has begun and the apiserver
// lets the node read it.
func read[T any](ctx context.Context, o *Objects, g getter[T], secret bool, namespace, name string) (T, error) {
	kind := "configmap"
	if secret {
		kind = "secret"
	}
	var zero T
	if g == nil {
		return zero, fmt.Errorf("%s %s/%s: %w", kind, namespace, name, ErrNotConnected)
	}
	o.mu.RLock()
	readable := o.readableLocked(secret, namespace, name)
	o.mu.RUnlock()
	if !readable {
		return zero, notYet(kind, namespace, name)
	}
	return g.Get(ctx, namespace, name)
}

// ServiceAccountToken returns a token of the pod's service account, bound
// to the pod, as the projection asks.
func (o *Objects) ServiceAccountToken(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	o.mu.RLock()
	tm, authorized := o.tokens, o.authorized[pod.UID]
	o.mu.RUnlock()
	if tm == nil {
		return "", fmt.Errorf("service account token of pod %s/%s: %w", pod.Namespace, pod.Name, ErrNotConnected)
	}
	if !authorized {
		return "", fmt.Errorf("service account token of pod %s/%s: %w", pod.Namespace, pod.Name, ErrNotYetAuthorized)
	}
	return tm.Token(ctx, pod, p)
}

// Allocatable is the Node's allocatable resources: what a container
// without a limit may use, for the downward API.
func (o *Objects) Allocatable() (corev1.ResourceList, error) {
	o.mu.RLock()
	node := o.node
	o.mu.RUnlock()
	if node == nil {
		return nil, fmt.Errorf("the Node's allocatable resources: %w", ErrNotConnected)
	}
	n, err := node(context.Background())
	if err != nil {
		return nil, fmt.Errorf("the Node's allocatable resources: %w", err)
	}
	return n.Status.Allocatable, nil
}

// fetcher is the Get strategy: every read goes to the apiserver.
type fetcher[T any] struct {
	get func(ctx context.Context, namespace, name string) (T, error)
}

func (fetcher[T]) RegisterPod(*corev1.Pod)   {}
func (fetcher[T]) UnregisterPod(*corev1.Pod) {}
func (f fetcher[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	return f.get(ctx, namespace, name)
}
