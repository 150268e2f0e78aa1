package objectcache

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// ttlStore is the caching strategy's store: reference counts and, per
// object, the last copy read and when.
type ttlStore[T Object] struct {
	kind    Kind[T]
	client  kubernetes.Interface
	clock   clock.PassiveClock
	ttl     func() time.Duration
	log     logr.Logger
	metrics kindMetrics

	mu      sync.RWMutex
	entries map[objectKey]*ttlEntry[T]
}

type ttlEntry[T Object] struct {
	refs int
	// data is replaced, never cleared in place, to invalidate: a read in
	// flight then completes into the old data, which nobody uses again, and
	// registering a pod never waits for a read.
	data *ttlData[T]
}

type ttlData[T Object] struct {
	mu      sync.Mutex // held across a read, so concurrent Gets share it
	fetched time.Time  // when the read that filled obj/err began; zero: never
	obj     T
	err     error // the apiserver's NotFound, cached like an object
}

func (s *ttlStore[T]) addRef(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok {
		e = &ttlEntry[T]{}
		s.entries[key] = e
	}
	e.refs++
}

func (s *ttlStore[T]) dropRef(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		if e.refs--; e.refs <= 0 {
			delete(s.entries, key)
		}
	}
}

func (s *ttlStore[T]) refresh(key objectKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		e.data = nil
	}
}

// current returns the data to read or fill for key, or false if no pod
// references it.
func (s *ttlStore[T]) current(key objectKey) (*ttlData[T], bool) {
	s.mu.RLock()
	e, ok := s.entries[key]
	if ok && e.data != nil {
		d := e.data
		s.mu.RUnlock()
		return d, true
	}
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok = s.entries[key]; !ok {
		return nil, false
	}
	if e.data == nil {
		e.data = &ttlData[T]{}
	}
	return e.data, true
}

func (s *ttlStore[T]) get(ctx context.Context, key objectKey) (T, error) {
	var zero T
	s.metrics.gets.Inc()
	d, ok := s.current(key)
	if !ok {
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, ErrNotRegistered)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := s.clock.Now()
	if !d.fetched.IsZero() && now.Before(d.fetched.Add(s.ttl())) {
		s.metrics.hits.Inc()
		return d.obj, d.err
	}
	s.metrics.misses.Inc()
	held := !d.fetched.IsZero() && d.err == nil
	var opts metav1.GetOptions
	if held {
		// A periodic refresh of a copy we hold may come from the
		// apiserver's watch cache instead of etcd; after an invalidation
		// (held is false) the read is consistent.
		opts.ResourceVersion = "0"
	}
	obj, err := s.kind.get(ctx, s.client, key.namespace, key.name, opts)
	switch {
	case err == nil:
		if held && olderThan(obj, d.obj) {
			// The watch cache lags behind what we hold: keep ours, and
			// leave fetched alone so that the next Get reads again.
			return d.obj, nil
		}
		if held && obj.GetResourceVersion() != d.obj.GetResourceVersion() {
			s.metrics.observePropagation(obj, s.clock.Now())
		}
		d.obj, d.err, d.fetched = obj, nil, now
	case apierrors.IsNotFound(err):
		d.obj, d.err, d.fetched = zero, err, now
	case d.fetched.IsZero():
		return zero, fmt.Errorf("%s %s: %w", s.kind.resource, key, err)
	default:
		s.log.V(2).Info("Refresh failed; serving the last copy read", "object", key.String(), "err", err)
	}
	return d.obj, d.err
}

// olderThan reports whether a has an older resource version than b. Resource
// versions are opaque to clients, but etcd3's are integers, and the
// apiserver's watch cache can lag behind a consistent read.
func olderThan(a, b Object) bool {
	av, err1 := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	bv, err2 := strconv.ParseUint(b.GetResourceVersion(), 10, 64)
	return err1 == nil && err2 == nil && av < bv
}
