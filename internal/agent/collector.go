package agent

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// collector garbage-collects dead containers and sandboxes on its own
// period, off the sync loop: a collection lists and removes, and may take
// longer than a loop iteration should. It never stops anything that runs.
type collector struct {
	rt           Runtime
	interval     time.Duration
	sourcesReady func() bool
	// gone reports whether a pod is neither desired nor possibly running.
	gone  func(types.UID) bool
	clock clock.WithTicker
	log   logr.Logger
	// mu makes one pass at a time: the eviction manager asks for one too
	// (Agent.RemoveDeadContainers).
	mu sync.Mutex
}

func (c *collector) run(ctx context.Context) error {
	return every(ctx, c.clock, c.interval, c.collect)
}

// every calls f each interval until ctx ends, then returns nil.
func every(ctx context.Context, c clock.WithTicker, interval time.Duration, f func(context.Context)) error {
	t := c.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			f(ctx)
		}
	}
}

func (c *collector) collect(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Until every source has spoken, any pod may still be wanted.
	ready := c.sourcesReady()
	deleted := func(uid types.UID) bool { return ready && c.gone(uid) }
	if err := c.rt.GarbageCollect(ctx, deleted); err != nil && ctx.Err() == nil {
		c.log.Error(err, "Garbage collection failed")
	}
}
