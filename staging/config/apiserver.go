package config

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

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
	// Reconnect, if not nil, cuts that back-off short: a receive, while
	// the last attempt to list or watch failed, starts the list and watch
	// over at once. Send on it when another request finds the apiserver
	// answering again after an outage; a watch that runs is left alone.
	Reconnect <-chan struct{}
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
// reflector re-lists on its own after watch failures, and at once on
// Reconnect.
func (s *APIServerSource) Run(ctx context.Context) error {
	selector := fields.OneTermEqualSelector("spec.nodeName", s.opts.NodeName).String()
	pods := s.opts.Pods
	// failing: the last list or watch failed, and the reflector waits
	// out its back-off.
	var failing atomic.Bool
	note := func(ctx context.Context, err error) {
		if ctx.Err() == nil {
			failing.Store(err != nil)
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			list, err := pods.List(ctx, o)
			note(ctx, err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			w, err := pods.Watch(ctx, o)
			note(ctx, err)
			return w, err
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
	// A reflector's back-off ends only with its context: each reconnection
	// is a new reflector into the same store, whose first list replaces
	// what the store holds.
	for {
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, pods), &corev1.Pod{}, store,
			cache.ReflectorOptions{Name: "nodeagent-apiserver-source", Backoff: &backoff, Clock: stoppableClock{ctx: rctx}})
		go func() { defer close(done); r.RunWithContext(logr.NewContext(rctx, s.log)) }()
		s.awaitReconnect(ctx, &failing)
		stop()
		<-done
		if ctx.Err() != nil {
			return nil
		}
		s.log.V(2).Info("The apiserver answers again; listing the pods now")
	}
}

// awaitReconnect returns when ctx ends, or when Reconnect receives while
// the last list or watch failed.
func (s *APIServerSource) awaitReconnect(ctx context.Context, failing *atomic.Bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.opts.Reconnect:
			if failing.Load() {
				return
			}
		}
	}
}

// stoppableClock is the real clock, but what it sends on After comes early
// once ctx ends: client-go's watch-list waits out its back-off on After
// without looking at the reflector's context, which would hold a
// reconnection back by up to a whole back-off.
type stoppableClock struct {
	clock.RealClock
	ctx context.Context
}

func (c stoppableClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	t := time.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case now := <-t.C:
			ch <- now
		case <-c.ctx.Done():
			ch <- time.Now()
		}
	}()
	return ch
}
