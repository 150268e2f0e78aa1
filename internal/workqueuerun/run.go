package workqueuerun

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Loop is one queue's workers and resync.
type Loop[T comparable] struct {
	Queue   workqueue.TypedRateLimitingInterface[T]
	Workers int
	// Resync queues every key; it runs when Run starts and then every
	// ResyncInterval.
	Resync         func()
	ResyncInterval time.Duration
	Clock          clock.WithTicker
	// Sync works on one key. An error retries it with back-off; a positive
	// duration looks at it again after that long.
	Sync func(ctx context.Context, key T) (time.Duration, error)
	// Failed, if not nil, is told of every error while ctx lasts.
	Failed func(key T, err error)
}

// Run runs the loop until ctx ends.
func Run[T comparable](ctx context.Context, l Loop[T]) {
	defer l.Queue.ShutDown()
	var wg sync.WaitGroup
	for range max(l.Workers, 1) {
		wg.Go(func() {
			for l.next(ctx) {
			}
		})
	}
	l.Resync()
	tick := l.Clock.NewTicker(l.ResyncInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Queue.ShutDown()
			wg.Wait()
			return
		case <-tick.C():
			l.Resync()
		}
	}
}

func (l Loop[T]) next(ctx context.Context) bool {
	key, shutdown := l.Queue.Get()
	if shutdown {
		return false
	}
	defer l.Queue.Done(key)
	again, err := l.Sync(ctx, key)
	switch {
	case err != nil:
		if l.Failed != nil && ctx.Err() == nil {
			l.Failed(key, err)
		}
		l.Queue.AddRateLimited(key)
	case again > 0:
		l.Queue.Forget(key)
		l.Queue.AddAfter(key, again)
	default:
		l.Queue.Forget(key)
	}
	return true
}
