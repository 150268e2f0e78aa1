package config

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// APIServerOptions configure an APIServerSource. All but Logger are
// required.
type APIServerOptions struct {
	// Pods reads the pods of every namespace, normally
	// clientset.CoreV1().Pods(metav1.NamespaceAll) of a clientset with the
	// node's identity. The reflector asks for a streaming list (watch-list)
	// when client-go's WatchListClient feature is on, unless Pods has a
	// method IsWatchListSemanticsUnSupported() bool that returns true, as
	// client-go's fakes do; wrap a fake's pod client to say so.
	Pods     PodListerWatcher
	NodeName string
	Sink     Sink
	Logger   logr.Logger
	// Backoff paces the reconnections after the watch fails; nil is
	// DefaultAPIServerBackoff.
	Backoff *wait.Backoff
}

// DefaultAPIServerBackoff paces a watch's reconnections to at most one
// every 2 to 3 s: client-go's default grows to 30 s (60 with its jitter),
// too slow to see within seconds of the apiserver's return what changed
// while it was away. A refused connection costs next to nothing.
var DefaultAPIServerBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 4, Cap: 2 * time.Second}

// APIServerSource lists and watches the pods bound to this node
// (spec.nodeName) and sends all of them as a SET after every change.
type APIServerSource struct {
	opts APIServerOptions
	log  logr.Logger
}

// NewAPIServerSource returns an APIServerSource, or an error naming a
// missing option.
func NewAPIServerSource(opts APIServerOptions) (*APIServerSource, error) {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{{"Pods", opts.Pods == nil}, {"NodeName", opts.NodeName == ""}, {"Sink", opts.Sink == nil}} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: APIServerOptions.%s is required", ErrInvalidOptions, f.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &APIServerSource{opts: opts, log: opts.Logger.WithName("apiserver-source").WithValues("node", opts.NodeName)}, nil
}

// Run lists and watches until ctx ends, and returns nil then. The
// reflector re-lists on its own after watch failures.
func (s *APIServerSource) Run(ctx context.Context) error {
	selector := fields.OneTermEqualSelector("spec.nodeName", s.opts.NodeName).String()
	pods := s.opts.Pods
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return pods.Watch(ctx, o)
		},
	}
	// The store calls push with every pod it holds after each change.
	push := func(objs []any) {
		update := podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.APIServerSource, Pods: make([]*corev1.Pod, 0, len(objs))}
		for _, o := range objs {
			if pod, ok := o.(*corev1.Pod); ok {
				// The store keeps its objects; the sink owns what it gets.
				update.Pods = append(update.Pods, pod.DeepCopy())
			}
		}
		if err := s.opts.Sink.Merge(ctx, update); err != nil && ctx.Err() == nil {
			s.log.Error(err, "The sink refused an update")
		}
	}
	store := cache.NewUndeltaStore(push, cache.MetaNamespaceKeyFunc)
	// Whether watch-list may be used is a property of the pod client, so the
	// reflector asks it (see APIServerOptions.Pods).
	backoff := DefaultAPIServerBackoff
	if s.opts.Backoff != nil {
		backoff = *s.opts.Backoff
	}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, pods),
		&corev1.Pod{}, store, cache.ReflectorOptions{Name: "nodeagent-apiserver-source", Backoff: &backoff})
	r.RunWithContext(logr.NewContext(ctx, s.log))
	return nil
}
