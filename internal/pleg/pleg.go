package pleg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Options configure a PLEG. Runtime is required.
type Options struct {
	Runtime Runtime
	// Interval is the pause between relists (default 1 s).
	Interval time.Duration
	// EventBuffer is the capacity of the events channel (default 1000). An
	// event that finds it full is dropped and logged; the pod's status in
	// the cache is current regardless.
	EventBuffer int
	// HealthyWithin is how recent the last successful relist must be for
	// Healthy to report no error (default 3 min).
	HealthyWithin time.Duration
	Logger        logr.Logger
	Clock         clock.Clock
}

// PLEG relists the runtime and emits pod lifecycle events.
type PLEG struct {
	runtime       Runtime
	interval      time.Duration
	healthyWithin time.Duration
	log           logr.Logger
	clock         clock.Clock
	cache         *Cache
	events        chan PodLifecycleEvent

	startOnce sync.Once

	// Owned by the relist goroutine.
	previous  snapshot
	reinspect map[types.UID]bool

	mu         sync.Mutex
	lastRelist time.Time
}

// New returns a PLEG; Start runs it.
func New(opts Options) (*PLEG, error) {
	if opts.Runtime == nil {
		return nil, errors.New("pleg: Options.Runtime is required")
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.EventBuffer <= 0 {
		opts.EventBuffer = 1000
	}
	if opts.HealthyWithin <= 0 {
		opts.HealthyWithin = 3 * time.Minute
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &PLEG{
		runtime:       opts.Runtime,
		interval:      opts.Interval,
		healthyWithin: opts.HealthyWithin,
		log:           opts.Logger.WithName("pleg"),
		clock:         opts.Clock,
		cache:         NewCache(),
		events:        make(chan PodLifecycleEvent, opts.EventBuffer),
		reinspect:     map[types.UID]bool{},
	}, nil
}

// Events returns the channel of pod lifecycle events. It is closed when
// Start returns.
func (p *PLEG) Events() <-chan PodLifecycleEvent { return p.events }

// Cache returns the pod status cache the relists keep current.
func (p *PLEG) Cache() *Cache { return p.cache }

// Start relists at once and then Interval after each relist ends, until
// ctx ends; then it returns nil. It may be called once.
func (p *PLEG) Start(ctx context.Context) error {
	started := false
	p.startOnce.Do(func() { started = true })
	if !started {
		return errors.New("pleg: Start called twice")
	}
	defer close(p.events)
	for {
		p.relist(ctx)
		t := p.clock.NewTimer(p.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Healthy reports an error if no relist succeeded within HealthyWithin.
func (p *PLEG) Healthy() error {
	p.mu.Lock()
	last := p.lastRelist
	p.mu.Unlock()
	if last.IsZero() {
		return errors.New("pleg: no relist has succeeded yet")
	}
	if since := p.clock.Since(last); since > p.healthyWithin {
		return fmt.Errorf("pleg: the last successful relist was %s ago (threshold %s)", since.Round(time.Second), p.healthyWithin)
	}
	return nil
}

// relist lists the runtime, refreshes the cached status of every pod that
// changed (and of those whose refresh failed before) unless the cache
// already holds a status that shows the change, marks the cache
// current as of the relist's start, and then sends the events, so that a
// worker woken by an event finds the new status.
func (p *PLEG) relist(ctx context.Context) {
	start := p.clock.Now()
	pods, err := p.runtime.GetPods(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error(err, "relist failed")
		}
		return
	}
	current := snapshotOf(pods)
	events := diff(p.previous, current)
	p.previous = current

	changed := map[types.UID]bool{}
	for _, e := range events {
		changed[e.ID] = true
	}
	for uid := range p.reinspect {
		changed[uid] = true
	}
	uids := make([]types.UID, 0, len(changed))
	for uid := range changed {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		// A worker that acted on the pod stored the status it fetched
		// afterwards; if that shows what this relist saw, it is current.
		if !p.reinspect[uid] && p.cache.holds(uid, current.get(uid)) {
			continue
		}
		status, err := p.runtime.GetPodStatus(ctx, uid)
		if err != nil {
			p.reinspect[uid] = true
			p.log.Error(err, "fetching pod status", "uid", uid)
		} else {
			delete(p.reinspect, uid)
		}
		p.cache.Set(uid, status, err, start)
	}
	p.cache.UpdateTime(start)
	p.mu.Lock()
	p.lastRelist = start
	p.mu.Unlock()

	for _, e := range events {
		select {
		case p.events <- e:
		default:
			p.log.Info("event channel full, dropping an event", "uid", e.ID, "type", e.Type, "data", e.Data)
		}
	}
}
