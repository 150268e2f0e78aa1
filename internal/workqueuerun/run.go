package workqueuerun

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// The agent's loops share these: a failed key is retried after 100 ms,
// doubling to 2 s, so that all converge within seconds of the apiserver's
// return (only keys with work pending are retried, so an outage costs
// little); every key is looked at again every 10 s; 4 workers.
const (
	firstRetry            = 100 * time.Millisecond
	lastRetry             = 2 * time.Second
	DefaultResyncInterval = 10 * time.Second
	DefaultWorkers        = 4
)

// NewQueue returns a rate-limited work queue with the agent's retry
// bounds; name labels its metrics.
func NewQueue[T comparable](name string, clk clock.WithTicker) workqueue.TypedRateLimitingInterface[T] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[T](firstRetry, lastRetry),
		workqueue.TypedRateLimitingQueueConfig[T]{Name: name, Clock: clk})
}

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
