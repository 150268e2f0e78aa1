package objectcache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// watchStore is the watching strategy's store: per referenced object, its
// reference count, the last state its watch saw, and the run (list, then
// watch) that keeps that state current.
type watchStore[T Object] struct {
	kind    Kind[T]
	opts    WatchingOptions
	log     logr.Logger
	metrics kindMetrics
	wg      sync.WaitGroup // one per run goroutine
	done    chan struct{}  // closed when Run stops

	mu      sync.RWMutex
	items   map[objectKey]*watchItem[T]
	ctx     context.Context // Run's; nil before Run
	stopped bool
	active  int // items whose run is watching
}

type watchItem[T Object] struct {
	key        objectKey
	lastAccess atomic.Int64 // UnixNano of the last Get, or of the run's start

	// Guarded by the store's mu.
	refs      int
	obj       T
	exists    bool
	synced    bool          // obj and exists come from the current run
	syncedCh  chan struct{} // closed when synced turns true
	immutable bool          // listed once; never watched again
	lastErr   error         // of the last failed list or watch
	cancel    context.CancelFunc
	// watching is set once the run's first list found the object mutable
	// (or missing): from then on the run holds, or re-establishes, a watch.
	watching bool
}

func (s *watchStore[T]) addRef(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[key]
	if !ok {
		it = &watchItem[T]{key: key, syncedCh: make(chan struct{})}
		s.items[key] = it
		s.startLocked(it)
	}
	it.refs++
}

func (s *watchStore[T]) dropRef(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[key]
	if !ok {
		return
	}
	if it.refs--; it.refs <= 0 {
		s.stopLocked(it)
		delete(s.items, key)
	}
}

// refresh restarts the watch of an object that went idle: a pod that
// references it has just been (re-)registered, so it is about to be read.
func (s *watchStore[T]) refresh(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.items[key]; ok {
		s.startLocked(it)
	}
}

// startLocked starts a run for it unless one runs, the object is immutable,
// or Run has not started or has stopped.
func (s *watchStore[T]) startLocked(it *watchItem[T]) {
	if s.ctx == nil || s.stopped || it.cancel != nil || it.immutable {
		return
	}
	ctx, cancel := context.WithCancel(s.ctx) // #nosec G118 -- kept in it.cancel; endRunLocked calls it
	it.cancel = cancel
	it.lastAccess.Store(s.opts.Clock.Now().UnixNano())
	s.wg.Add(1)
	go s.runWatch(ctx, it)
}

// endRunLocked cancels the current run, if any. A cancelled run changes
// nothing more: it checks its context under the lock before each change.
func (s *watchStore[T]) endRunLocked(it *watchItem[T]) {
	if it.cancel == nil {
		return
	}
	it.cancel()
	it.cancel = nil
	if it.watching {
		it.watching = false
		s.active--
		s.metrics.activeWatches.Dec()
	}
}

// stopLocked ends the run and forgets what it saw, so that a Get waits for
// the next run's list instead of serving a state nobody keeps current.
func (s *watchStore[T]) stopLocked(it *watchItem[T]) {
	s.endRunLocked(it)
	if it.synced {
		var zero T
		it.obj, it.exists, it.synced = zero, false, false
		it.syncedCh = make(chan struct{})
	}
}

func (s *watchStore[T]) activeWatches() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.active
}

func (s *watchStore[T]) get(ctx context.Context, key objectKey) (T, error) {
	s.metrics.gets.Inc()
	s.mu.RLock()
	it, ok := s.items[key]
	if ok && it.synced {
		it.lastAccess.Store(s.opts.Clock.Now().UnixNano())
		obj, exists := it.obj, it.exists
		s.mu.RUnlock()
		s.metrics.hits.Inc()
		return s.result(key, obj, exists)
	}
	s.mu.RUnlock()
	if !ok {
		var zero T
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, ErrNotRegistered)
	}
	s.metrics.misses.Inc()
	return s.waitSynced(ctx, key)
}

// waitSynced is Get's slow path: it restarts an idle watch and waits for
// the run's first list.
func (s *watchStore[T]) waitSynced(ctx context.Context, key objectKey) (T, error) {
	var zero T
	s.mu.Lock()
	it, ok := s.items[key]
	switch {
	case !ok:
		s.mu.Unlock()
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, ErrNotRegistered)
	case s.stopped:
		s.mu.Unlock()
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, ErrStopped)
	}
	it.lastAccess.Store(s.opts.Clock.Now().UnixNano())
	s.startLocked(it)
	synced := it.syncedCh
	s.mu.Unlock()

	timer := s.opts.Clock.NewTimer(s.opts.SyncTimeout)
	defer timer.Stop()
	select {
	case <-synced:
		s.mu.RLock()
		obj, exists, ok := it.obj, it.exists, it.synced
		s.mu.RUnlock()
		if ok {
			return s.result(key, obj, exists)
		}
		return zero, fmt.Errorf("%s %s: %w: watch stopped while waiting", s.kind.resource, key, ErrNotSynced)
	case <-ctx.Done():
		return zero, fmt.Errorf("%s %s: %w: %w", s.kind.resource, key, ErrNotSynced, ctx.Err())
	case <-s.done:
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, ErrStopped)
	case <-timer.C():
	}
	s.mu.RLock()
	lastErr, running := it.lastErr, s.ctx != nil
	s.mu.RUnlock()
	switch {
	case !running:
		return zero, fmt.Errorf("%s %s: %w within %v: Run has not been called", s.kind.resource, key, ErrNotSynced, s.opts.SyncTimeout)
	case lastErr != nil:
		return zero, fmt.Errorf("%s %s: %w within %v: %w", s.kind.resource, key, ErrNotSynced, s.opts.SyncTimeout, lastErr)
	}
	return zero, fmt.Errorf("%s %s: %w within %v", s.kind.resource, key, ErrNotSynced, s.opts.SyncTimeout)
}

func (s *watchStore[T]) result(key objectKey, obj T, exists bool) (T, error) {
	if !exists {
		return obj, apierrors.NewNotFound(s.kind.resource, key.name)
	}
	return obj, nil
}

// stopIdle stops the watches of synced objects not read since MaxIdle.
func (s *watchStore[T]) stopIdle(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.items {
		idle := now.Sub(time.Unix(0, it.lastAccess.Load()))
		if it.cancel != nil && it.synced && idle > s.opts.MaxIdle {
			s.stopLocked(it)
			s.log.V(4).Info("Watch stopped: object not read recently", "object", it.key.String(), "idle", idle)
		}
	}
}

func (s *watchStore[T]) run(ctx context.Context) error {
	s.mu.Lock()
	if s.ctx != nil {
		s.mu.Unlock()
		return ErrAlreadyRunning
	}
	s.ctx = ctx
	for _, it := range s.items {
		s.startLocked(it)
	}
	s.mu.Unlock()

	ticker := s.opts.Clock.NewTicker(min(s.opts.ResyncPeriod, s.opts.MaxIdle))
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C():
			s.stopIdle(s.opts.Clock.Now())
		case <-ctx.Done():
			s.mu.Lock()
			s.stopped = true
			for _, it := range s.items {
				s.stopLocked(it)
			}
			close(s.done)
			s.mu.Unlock()
			s.wg.Wait()
			return nil
		}
	}
}
