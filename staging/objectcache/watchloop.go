package objectcache

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	// A watch that ends sooner than this without an error is retried after
	// a backoff, not at once, so that a misbehaving server is not hammered.
	minWatchDuration = time.Second
	// Watches ask the server to end them after a random time between this
	// and twice this, which spreads reconnections out.
	minWatchTimeout = 5 * time.Minute
)

// runWatch keeps one object's state current until ctx ends or the object
// turns out to be immutable: list it by name, then watch from the list's
// resource version, re-watching when a watch ends and listing again when
// the version has expired. Failures are retried with backoff.
func (s *watchStore[T]) runWatch(ctx context.Context, it *watchItem[T]) {
	defer s.wg.Done()
	log := s.log.WithValues("object", it.key.String())
	log.V(4).Info("Watch started")
	defer log.V(4).Info("Watch ended")
	// Each delay doubles up to RetryMax and gets up to half of itself added
	// at random, so that the nodes of a cluster that lost the apiserver
	// together do not come back in step.
	fresh := wait.Backoff{Duration: s.opts.RetryInitial, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32, Cap: s.opts.RetryMax}
	retry := fresh
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			var done bool
			var err error
			if rv, done, err = s.list(ctx, it); done {
				return
			}
			if err != nil {
				if !s.retryAfter(ctx, it, log, &retry, "list", err) {
					return
				}
				continue
			}
		}
		started := s.opts.Clock.Now()
		next, done, err := s.watch(ctx, it, rv)
		if done {
			return
		}
		rv = next
		switch {
		case err != nil:
			if !s.retryAfter(ctx, it, log, &retry, "watch", err) {
				return
			}
		case rv == "":
			// The version expired: list again at once.
		case s.opts.Clock.Since(started) < minWatchDuration:
			if !s.sleep(ctx, retry.Step()) {
				return
			}
		default:
			retry = fresh
		}
	}
}

// list reads the object by name and applies it. It returns the list's
// resource version, and done when the run is over (immutable, or stopped).
func (s *watchStore[T]) list(ctx context.Context, it *watchItem[T]) (rv string, done bool, err error) {
	items, rv, err := s.kind.list(ctx, s.opts.Client, it.key.namespace, metav1.ListOptions{
		FieldSelector: nameSelector(it.key.name),
	})
	if err != nil {
		return "", false, err
	}
	var obj T
	exists := false
	for _, o := range items {
		if o.GetName() == it.key.name { // a server (or fake) may ignore the selector
			obj, exists = o, true
		}
	}
	return rv, s.apply(ctx, it, obj, exists, false), nil
}

// watch applies events from rv on until the watch ends. It returns the
// version to watch from next ("" to list again), and done when the run is
// over.
func (s *watchStore[T]) watch(ctx context.Context, it *watchItem[T], rv string) (next string, done bool, err error) {
	timeout := int64(minWatchTimeout.Seconds() * (1 + rand.Float64())) // #nosec G404 -- spreads watch timeouts; guards no secret
	w, err := s.kind.watch(ctx, s.opts.Client, it.key.namespace, metav1.ListOptions{
		FieldSelector:       nameSelector(it.key.name),
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
	})
	if err != nil {
		if expired(err) {
			return "", false, nil
		}
		return rv, false, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, true, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, false, nil
			}
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); !expired(err) {
					return "", false, err
				}
				return "", false, nil
			}
			obj, ok := ev.Object.(T)
			if !ok {
				return "", false, fmt.Errorf("watch event %s carries a %T", ev.Type, ev.Object)
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Bookmark || obj.GetName() != it.key.name {
				continue
			}
			if s.apply(ctx, it, obj, ev.Type != watch.Deleted, true) {
				return rv, true, nil
			}
		}
	}
}

// apply stores what a list or watch event of the run under ctx saw, and
// reports whether the run is over: stopped meanwhile, or the object is
// immutable, in which case the state is kept and never watched again.
func (s *watchStore[T]) apply(ctx context.Context, it *watchItem[T], obj T, exists, fromWatch bool) (done bool) {
	now := s.opts.Clock.Now()
	changed := false
	if s.opts.OnChange != nil {
		// Deferred before the unlock, so it runs after it.
		defer func() {
			if changed {
				s.opts.OnChange(it.key.namespace, it.key.name)
			}
		}()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return true
	}
	if !exists {
		var zero T
		obj = zero
	}
	changed = it.synced && (exists != it.exists || exists && it.obj.GetResourceVersion() != obj.GetResourceVersion())
	if fromWatch && it.synced && exists && (!it.exists || it.obj.GetResourceVersion() != obj.GetResourceVersion()) {
		s.metrics.observePropagation(obj, now)
	}
	it.obj, it.exists, it.lastErr = obj, exists, nil
	if !it.synced {
		it.synced = true
		close(it.syncedCh)
	}
	if exists && s.kind.immutable(obj) {
		it.immutable = true
		s.endRunLocked(it)
		s.log.V(4).Info("Object is immutable: read once, not watched", "object", it.key.String())
		return true
	}
	if !it.watching {
		it.watching = true
		s.active++
		s.metrics.activeWatches.Inc()
	}
	return false
}

// retryAfter records a failure and sleeps for the next backoff; false means
// the run is over.
func (s *watchStore[T]) retryAfter(ctx context.Context, it *watchItem[T], log logr.Logger, b *wait.Backoff, op string, err error) bool {
	s.mu.Lock()
	if ctx.Err() == nil {
		it.lastErr = err
	}
	s.mu.Unlock()
	d := b.Step()
	log.V(1).Info("Failed; retrying", "op", op, "err", err, "after", d)
	return s.sleep(ctx, d)
}

func (s *watchStore[T]) sleep(ctx context.Context, d time.Duration) bool {
	t := s.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

func nameSelector(name string) string {
	return fields.OneTermEqualSelector("metadata.name", name).String()
}

func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
