package pleg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/exitwatch"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// DefaultInterval is the pause between relists when Options.Interval is
// not set: how long it may take to notice that a container exited, when
// the exit watch does not see it first.
const DefaultInterval = time.Second

// watchedFactor makes the default Options.WatchedInterval: the pause
// between relists while the exit watch watches every container the last
// relist saw running. The exits the relist exists to notice are then seen
// by the watch within milliseconds, and what only a relist notices (a
// sandbox or a stopped container changed behind the agent's back) is rare.
// The kubelet's evented PLEG, which gets the runtime's container events,
// relists every 300 s for the same reason; 10 s (at the default Interval)
// keeps those rare changes noticed within seconds.
const watchedFactor = 10

// Options configure a PLEG. Runtime is required.
type Options struct {
	Runtime Runtime
	// Interval is the pause between relists (default DefaultInterval).
	Interval time.Duration
	// WatchedInterval is the pause between relists while the exit watch
	// watches every running container the last relist saw, no exit it saw
	// is awaited, no status fetch is to be retried and no status was stored
	// since (default 10 Intervals; never less than Interval).
	WatchedInterval time.Duration
	// EventBuffer is the capacity of the events channel (default 1000). An
	// event that finds it full is dropped and logged; the pod's status in
	// the cache is current regardless.
	EventBuffer int
	// HealthyWithin is how recent the last successful relist must be for
	// Healthy to report no error (default 3 min).
	HealthyWithin time.Duration
	Logger        logr.Logger
	Clock         clock.Clock
	// ContainerPID, when set, turns on the exit watch: the PLEG watches
	// the process of every running container (see package exitwatch) and
	// relists at once when one exits, instead of at the next Interval.
	ContainerPID func(ctx context.Context, containerID string) (int, error)
	// Registry, when set, gets the kubelet's PLEG metrics (relist
	// duration and interval, last seen, running pods and containers).
	Registry metrics.KubeRegistry
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid pleg options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field; zero means the default.
func (o Options) validate() error {
	var errs []error
	if o.Runtime == nil {
		errs = append(errs, fmt.Errorf("%w: Runtime is required", ErrInvalidOptions))
	}
	if o.Interval < 0 {
		errs = append(errs, fmt.Errorf("%w: Interval is negative (%v)", ErrInvalidOptions, o.Interval))
	}
	if o.EventBuffer < 0 {
		errs = append(errs, fmt.Errorf("%w: EventBuffer is negative (%d)", ErrInvalidOptions, o.EventBuffer))
	}
	if o.HealthyWithin < 0 {
		errs = append(errs, fmt.Errorf("%w: HealthyWithin is negative (%v)", ErrInvalidOptions, o.HealthyWithin))
	}
	if o.WatchedInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: WatchedInterval is negative (%v)", ErrInvalidOptions, o.WatchedInterval))
	}
	return errors.Join(errs...)
}

// PLEG relists the runtime and emits pod lifecycle events.
type PLEG struct {
	runtime  Runtime
	interval time.Duration
	// watchedInterval is Options.WatchedInterval; watched says whether the
	// exit watch waits on a container (the watch's Watched).
	watchedInterval time.Duration
	watched         func(containerID string) bool
	healthyWithin   time.Duration
	log             logr.Logger
	clock           clock.Clock
	cache           *Cache
	events          chan PodLifecycleEvent
	metrics         *plegMetrics
	// exits is the exit watch, nil without Options.ContainerPID; an exit
	// it sees wakes the relist loop through relistNow.
	exits     *exitwatch.Watcher
	relistNow chan struct{}
	// stored is set when a status is stored in the cache (by a worker,
	// after its own actions, or by a relist) and cleared as a relist
	// begins: the next relist is not put off then, since a change the
	// agent made (a container it killed) may be one no watch sees.
	stored atomic.Bool
	// exitsMu guards exited: the containers whose exits the watch saw,
	// until a relist shows them not running. The runtime records an exit a
	// few milliseconds after the process ends, so a relist right after may
	// still see the container running: it relists again soon.
	exitsMu sync.Mutex
	exited  map[string]awaitedExit

	runOnce sync.Once

	// Owned by the relist goroutine.
	previous  snapshot
	reinspect map[types.UID]bool

	mu         sync.Mutex
	lastRelist time.Time
	// listed is what the last successful relist listed.
	listed []*runtime.Pod
}

// New returns a PLEG; Run runs it.
func New(opts Options) (*PLEG, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.WatchedInterval == 0 {
		opts.WatchedInterval = watchedFactor * opts.Interval
	}
	opts.WatchedInterval = max(opts.WatchedInterval, opts.Interval)
	if opts.EventBuffer == 0 {
		opts.EventBuffer = 1000
	}
	if opts.HealthyWithin == 0 {
		opts.HealthyWithin = 3 * time.Minute
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("pleg metrics: %w", err)
	}
	p := &PLEG{
		metrics:         m,
		runtime:         opts.Runtime,
		interval:        opts.Interval,
		watchedInterval: opts.WatchedInterval,
		healthyWithin:   opts.HealthyWithin,
		log:             opts.Logger.WithName("pleg"),
		clock:           opts.Clock,
		cache:           NewCache(),
		events:          make(chan PodLifecycleEvent, opts.EventBuffer),
		reinspect:       map[types.UID]bool{},
		relistNow:       make(chan struct{}, 1),
		exited:          map[string]awaitedExit{},
	}
	if opts.ContainerPID != nil {
		p.exits, err = exitwatch.New(exitwatch.Options{
			PID:    opts.ContainerPID,
			Exited: p.containerExited,
			Logger: p.log,
		})
		if err != nil {
			return nil, err
		}
		p.cache.onSet = func(s *runtime.PodStatus) {
			p.stored.Store(true)
			p.watchRunning(s)
		}
		p.watched = p.exits.Watched
	}
	return p, nil
}

// Events returns the channel of pod lifecycle events. It is closed when
// Run returns.
func (p *PLEG) Events() <-chan PodLifecycleEvent { return p.events }

// Cache returns the pod status cache the relists keep current.
func (p *PLEG) Cache() *Cache { return p.cache }

// Run relists at once and then Interval after each relist ends
// (WatchedInterval while the exit watch covers every running container),
// or sooner when the exit watch sees a container exit, until ctx ends;
// then it returns nil. It may be called once.
func (p *PLEG) Run(ctx context.Context) error {
	started := false
	p.runOnce.Do(func() { started = true })
	if !started {
		return errors.New("pleg: Run called twice")
	}
	defer close(p.events)
	if p.exits != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = p.exits.Run(ctx)
		}()
		defer func() { <-done }()
	}
	for {
		began := p.clock.Now()
		p.relist(ctx)
		if !p.untilDue(ctx, began) {
			return nil
		}
	}
}

// untilDue waits until the next relist is due: Interval after the last
// one began (less while an exit the watch saw is awaited), or at once
// when the watch sees an exit; but WatchedInterval while, at each
// Interval, the watch still covers what the last relist saw. It reports
// false once ctx has ended.
func (p *PLEG) untilDue(ctx context.Context, began time.Time) bool {
	for {
		t := p.clock.NewTimer(p.nextRelist())
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-p.relistNow:
			t.Stop()
			// Exits that come one after another (a node's pods stopped
			// together) make one relist per exitRecheck at most.
			return p.pause(ctx, exitRecheck-p.clock.Since(began))
		case <-t.C():
		}
		if !p.covered() || p.clock.Since(began) >= p.watchedInterval {
			return true
		}
		p.metrics.covered(p.clock.Now())
	}
}

// pause waits d (nothing if d <= 0); it reports false if ctx ended first.
func (p *PLEG) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := p.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// exitRecheck is how soon a relist follows one that still saw running a
// container whose exit the watch saw, doubled at each relist that still
// does (whatever made it relist); it is also the least time between two
// relists an exit made. exitRecheckFor is how long the rechecks go on: a
// runtime that lists the container running all that while is not the one
// whose processes the agent sees (another PID namespace), and the exit
// watch is then turned off.
const (
	exitRecheck    = 5 * time.Millisecond
	exitRecheckFor = 30 * time.Second
)

// awaitedExit is an exit the watch saw that no relist has shown yet.
type awaitedExit struct {
	since time.Time
	wait  time.Duration // the pause before the next relist; 0 until one relist saw it running
}

// containerExited is the exit watch's report: relist now.
func (p *PLEG) containerExited(id string) {
	p.exitsMu.Lock()
	p.exited[id] = awaitedExit{since: p.clock.Now()}
	p.exitsMu.Unlock()
	p.wake()
}

// nextRelist is the pause before the next relist: Interval, or less while
// an exit the watch saw is not yet in the runtime's list.
func (p *PLEG) nextRelist() time.Duration {
	p.exitsMu.Lock()
	defer p.exitsMu.Unlock()
	next := p.interval
	for _, e := range p.exited {
		if e.wait > 0 {
			next = min(next, e.wait)
		}
	}
	return next
}

// covered reports whether the exit watch is on and waits on every
// container the last relist saw running, with no exit it saw awaited, no
// pod's status to be fetched again and none stored since that relist
// began: a relist would find nothing the watch does not tell. Only the
// relist goroutine calls it.
func (p *PLEG) covered() bool {
	if p.watched == nil || p.exits.Off() || len(p.reinspect) > 0 || p.stored.Load() {
		return false
	}
	p.exitsMu.Lock()
	awaited := len(p.exited)
	p.exitsMu.Unlock()
	if awaited > 0 {
		return false
	}
	for _, pod := range p.previous {
		for _, c := range pod.containers {
			if c.state == runtime.ContainerStateRunning && !p.watched(c.id) {
				return false
			}
		}
	}
	return true
}

// settleExits forgets the exits the relist shows (the container is not
// running), backs off the recheck of the others, and gives up on those
// awaited too long.
func (p *PLEG) settleExits(running map[string]bool) {
	p.exitsMu.Lock()
	defer p.exitsMu.Unlock()
	now := p.clock.Now()
	for id, e := range p.exited {
		switch {
		case !running[id]:
			delete(p.exited, id)
		case now.Sub(e.since) > exitRecheckFor:
			delete(p.exited, id)
			p.exits.TurnOff(fmt.Errorf("container %s: its process is gone, but the runtime has listed it running for %s since", id, exitRecheckFor))
		default:
			e.wait = max(exitRecheck, 2*e.wait)
			p.exited[id] = e
		}
	}
}

// ProcessState is what the exit watch knows of a container's process.
type ProcessState string

const (
	// ProcessUnwatched: the exit watch does not watch it (it is off, or
	// has not begun yet); an exit is seen at the next relist.
	ProcessUnwatched ProcessState = ""
	// ProcessWatched: it runs, and its exit will be seen within
	// milliseconds.
	ProcessWatched ProcessState = "watched"
	// ProcessExited: it has exited, and the runtime has not recorded the
	// exit (its code) yet.
	ProcessExited ProcessState = "exited"
)

// Process tells what the exit watch knows of a container's process.
func (p *PLEG) Process(containerID string) ProcessState {
	if p.exits == nil {
		return ProcessUnwatched
	}
	p.exitsMu.Lock()
	_, exited := p.exited[containerID]
	p.exitsMu.Unlock()
	switch {
	case exited:
		return ProcessExited
	case p.exits.Watched(containerID):
		return ProcessWatched
	}
	return ProcessUnwatched
}

// wake makes the relist loop relist now; wakes that come while it relists
// make one more relist, not one each.
func (p *PLEG) wake() {
	select {
	case p.relistNow <- struct{}{}:
	default:
	}
}

// watchRunning begins watching the running containers of a status that a
// worker or a relist stored: a container a worker just started is watched
// before the next relist could see it.
func (p *PLEG) watchRunning(s *runtime.PodStatus) {
	if s == nil {
		return
	}
	for i := range s.Containers {
		if s.Containers[i].State == runtime.ContainerStateRunning {
			p.exits.Watch(s.Containers[i].ID)
		}
	}
}

// Pods returns what the last successful relist listed, which the caller
// must not change, and false before one has succeeded. It is as current
// as a relist: within Interval, or within WatchedInterval for what the
// exit watch would have told at once.
func (p *PLEG) Pods() ([]*runtime.Pod, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listed, !p.lastRelist.IsZero()
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
	p.stored.Store(false)
	start := p.clock.Now()
	p.mu.Lock()
	previous := p.lastRelist
	p.mu.Unlock()
	pods, err := p.runtime.GetPods(ctx)
	if err != nil {
		p.metrics.relisted(start, p.clock.Now(), previous, false)
		if ctx.Err() == nil {
			p.log.Error(err, "relist failed")
		}
		return
	}
	current := snapshotOf(pods)
	p.metrics.counted(current)
	events := diff(p.previous, current)
	p.previous = current
	if p.exits != nil {
		p.watchExits(current)
	}

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
	p.lastRelist, p.listed = start, pods
	p.mu.Unlock()
	p.metrics.relisted(start, p.clock.Now(), previous, true)

	for _, e := range events {
		select {
		case p.events <- e:
		default:
			p.log.Info("event channel full, dropping an event", "uid", e.ID, "type", e.Type, "data", e.Data)
		}
	}
}

// watchExits watches every running container of the snapshot, ends the
// watches of the others, and settles the exits the watch saw.
func (p *PLEG) watchExits(s snapshot) {
	running := map[string]bool{}
	for _, pod := range s {
		for _, c := range pod.containers {
			if c.state == runtime.ContainerStateRunning {
				running[c.id] = true
				p.exits.Watch(c.id)
			}
		}
	}
	p.exits.Retain(func(id string) bool { return running[id] })
	p.settleExits(running)
}
