package app

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
)

// stopGrace is how long the parts have to return once the agent stops.
// A part still waiting then (a request hung on a connection the
// apiserver dropped, say) is named in the log and left behind: the
// process exits, and the pods run on, as they do on any stop.
const stopGrace = 15 * time.Second

// part is one long-running part of the agent: a Run that returns when ctx
// ends, and its name for the log.
type part struct {
	name string
	run  func(context.Context) error
}

// parts run under one errgroup: the first to fail ends the others.
type parts []part

// run runs every part until ctx ends or one fails, then waits for them
// to return, at most grace. The last parts outlive the others: their ctx
// ends only once every other part has returned (the checkpoint's writer
// writes last what the others changed on their way out), or once the grace
// has passed. A last part that fails ends the others as any part does.
func (p parts) run(ctx context.Context, grace time.Duration, log logr.Logger, last ...part) error {
	g, gctx := errgroup.WithContext(ctx)
	lctx, stopLast := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLast()
	var mu sync.Mutex
	running := map[string]bool{}
	for _, pt := range slices.Concat(p, last) {
		running[pt.name] = true
	}
	start := func(pt part, ctx context.Context, done func()) {
		g.Go(func() error {
			defer done()
			defer func() {
				mu.Lock()
				delete(running, pt.name)
				mu.Unlock()
			}()
			if err := pt.run(ctx); err != nil {
				return fmt.Errorf("%s: %w", pt.name, err)
			}
			return nil
		})
	}
	var others sync.WaitGroup
	for _, pt := range p {
		others.Add(1)
		start(pt, gctx, others.Done)
	}
	for _, pt := range last {
		start(pt, lctx, func() {})
	}
	go func() {
		others.Wait()
		stopLast()
	}()
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case err := <-done:
		return err
	case <-gctx.Done():
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		stopLast()
		mu.Lock()
		left := make([]string, 0, len(running))
		for name := range running {
			left = append(left, name)
		}
		mu.Unlock()
		slices.Sort(left)
		// Where they wait, for whoever finds out why: the stacks of every
		// goroutine, bounded.
		stacks := make([]byte, 256<<10)
		stacks = stacks[:runtime.Stack(stacks, true)]
		log.Error(nil, "Parts did not stop in time; exiting without them", "grace", grace, "parts", left, "goroutines", string(stacks))
		return nil
	}
}
