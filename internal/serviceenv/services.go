package serviceenv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrNotSynced: the Services have not been read once yet, so a pod from
// the apiserver would miss its variables (KUBERNETES_SERVICE_HOST, which
// in-cluster clients need, first of all). Its container waits and is
// tried again.
var ErrNotSynced = errors.New("the cluster's Services have not been read yet")

// masterService is the Service every pod gets the variables of, from the
// default namespace, whatever its enableServiceLinks.
const masterService = "kubernetes"

// Options configure a Services.
type Options struct {
	// SyncWait bounds how long a pod from the apiserver waits for the
	// first read of the Services before its container start fails with
	// ErrNotSynced (default 2 s). Static pods never wait.
	SyncWait time.Duration
	Logger   logr.Logger
}

// Services serves the service variables of pods from an informer's
// cache. It is safe for concurrent use; until Run has started it, it
// holds no Service.
type Services struct {
	opts   Options
	lister atomic.Pointer[corelisters.ServiceLister]
	synced chan struct{}
}

// New returns a Services; Run starts its informer.
func New(opts Options) *Services {
	if opts.SyncWait <= 0 {
		opts.SyncWait = 2 * time.Second
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Services{opts: opts, synced: make(chan struct{})}
}

// Run lists and watches the cluster's Services until ctx ends.
func (s *Services) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(slim))
	services := factory.Core().V1().Services()
	informer, lister := services.Informer(), services.Lister()
	// The informer ends with ctx; Run does not wait for it to have
	// ended (the factory's Shutdown): after an apiserver outage its
	// reflector may be sleeping out a retry delay of up to half a minute
	// that does not watch ctx (client-go's watch-list retry), and the
	// agent's stop must not wait for that.
	factory.Start(ctx.Done())
	s.lister.Store(&lister)
	if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		close(s.synced)
		s.opts.Logger.V(1).Info("Services read; pods get their service environment variables")
	}
	<-ctx.Done()
	return nil
}

// ServiceEnv returns the pod's service variables. A pod from the
// apiserver waits, at most Options.SyncWait, for the first read of the
// Services; a static pod takes what has been read so far (nothing while
// the apiserver is away), as the kubelet does, so that it never waits on
// the apiserver.
func (s *Services) ServiceEnv(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	if !podtypes.IsStaticPod(pod) {
		if err := s.waitSynced(ctx); err != nil {
			return nil, err
		}
	}
	l := s.lister.Load()
	if l == nil {
		return nil, nil
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	return vars(*l, pod.Namespace, links)
}

func (s *Services) waitSynced(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	default:
	}
	t := time.NewTimer(s.opts.SyncWait)
	defer t.Stop()
	select {
	case <-s.synced:
		return nil
	case <-t.C:
		return ErrNotSynced
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotSynced, ctx.Err())
	}
}

// vars are the variables of default/kubernetes and, with links, of the
// Services of namespace, a Service of the pod's namespace winning over
// default/kubernetes for the name kubernetes, as in the kubelet.
func vars(l corelisters.ServiceLister, namespace string, links bool) (map[string]string, error) {
	byName := map[string]*corev1.Service{}
	if svc, err := l.Services(metav1.NamespaceDefault).Get(masterService); err == nil && hasClusterIP(svc) {
		byName[masterService] = svc
	}
	if links {
		list, err := l.Services(namespace).List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("listing the Services of %s: %w", namespace, err)
		}
		for _, svc := range list {
			if hasClusterIP(svc) {
				byName[svc.Name] = svc
			}
		}
	}
	// In name order, so that two Services whose variables collide give
	// the same environment every time.
	list := make([]*corev1.Service, 0, len(byName))
	for _, svc := range byName {
		list = append(list, svc)
	}
	slices.SortFunc(list, func(a, b *corev1.Service) int { return cmp.Compare(a.Name, b.Name) })
	out := make(map[string]string, len(list)*8)
	for _, svc := range list {
		addVars(out, svc)
	}
	return out, nil
}

// slim keeps of a Service only what its variables need, so that the cache
// of a large cluster's Services stays small.
func slim(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, UID: svc.UID, ResourceVersion: svc.ResourceVersion},
		Spec:       corev1.ServiceSpec{ClusterIP: svc.Spec.ClusterIP},
	}
	if len(svc.Spec.Ports) > 0 {
		out.Spec.Ports = make([]corev1.ServicePort, len(svc.Spec.Ports))
		for i, p := range svc.Spec.Ports {
			out.Spec.Ports[i] = corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port}
		}
	}
	return out, nil
}
