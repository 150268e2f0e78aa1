package podworkers

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// PodWorkers drives each pod through SyncPod, SyncTerminatingPod and
// SyncTerminatedPod with one goroutine per pod UID. It is safe for
// concurrent use. Create it with New and run it with Run.
type PodWorkers struct {
	syncer       Syncer
	clock        clock.PassiveClock
	log          logr.Logger
	metrics      Metrics
	resync       time.Duration
	backoff      time.Duration
	shortBackoff time.Duration // for ErrNetworkNotReady and ErrTransient
	jitter       func(time.Duration) time.Duration

	// mu guards everything below, and every worker's fields.
	mu         sync.Mutex
	runCtx     context.Context // set by Run; workers spawn under it
	stopped    bool            // Run's context has ended
	workers    map[types.UID]*worker
	gate       startGate
	queue      workQueue
	synced     bool // SyncKnownPods has run: every pod has been given to UpdatePod
	phases     PhaseCounts
	working    int // workers with a wake-up queued or a goroutine busy
	goroutines int // worker goroutines that have not decided to end
	wg         sync.WaitGroup
}

// worker is the shell around one pod's record: a goroutine woken through a
// channel of capacity 1. A wake-up sent while one is queued is dropped; the
// record's pending update, replaced in place, is what the goroutine reads.
type worker struct {
	state   podState
	wake    chan struct{}
	ctx     context.Context    // Run's context, carrying the pod's logger
	cancel  context.CancelFunc // cancels the in-flight Syncer call, if any
	working bool               // a wake-up is queued or the goroutine is busy
	spawned bool               // the goroutine has been started
	gone    bool               // the goroutine must end (finished or forgotten)
}

// New returns pod workers that do nothing until Run is called. Updates
// given before Run are kept; their workers start with Run.
func New(opts Options) (*PodWorkers, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &PodWorkers{
		syncer:       opts.Syncer,
		clock:        opts.Clock,
		log:          opts.Logger,
		metrics:      opts.Metrics,
		resync:       opts.ResyncInterval,
		backoff:      opts.BackoffPeriod,
		shortBackoff: opts.NetworkNotReadyBackoff,
		jitter:       opts.Jitter,
		workers:      map[types.UID]*worker{},
		gate:         newStartGate(),
		queue:        newWorkQueue(),
	}, nil
}

// Run starts the workers and blocks until ctx ends. It then cancels every
// in-flight Syncer call and returns once every worker goroutine has ended.
func (p *PodWorkers) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.runCtx != nil {
		p.mu.Unlock()
		return ErrAlreadyRunning
	}
	p.runCtx = ctx
	for _, w := range p.workers {
		p.spawnLocked(w)
	}
	p.mu.Unlock()

	<-ctx.Done()
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// UpdatePod hands a change to the pod's worker, starting one for a UID it
// has not seen. It never blocks on the worker: an update to a busy worker
// replaces the one still pending, except that once the pod is being killed
// every later update is merged into the kill. A Create for a pod whose
// termination was requested is ignored: a UID never runs again once killed,
// until SyncKnownPods has forgotten it.
func (p *PodWorkers) UpdatePod(opts UpdatePodOptions) error {
	uid, err := opts.target()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	w, ok := p.workers[uid]
	if !ok {
		w = &worker{state: newPodState(uid, opts.fullName(), opts.static()), wake: make(chan struct{}, 1)}
		p.workers[uid] = w
		p.phases.add(PhaseSync, 1)
		p.metrics.WorkerPhases(p.phases)
		if w.state.static {
			p.gate.arrive(w.state.fullName, uid)
		}
		p.spawnLocked(w)
	}
	p.stepLocked(w, event{kind: evUpdate, update: opts})
	return nil
}

// stepLocked runs the transition function on w and carries out its
// effects, except the Syncer call, which it returns for the worker to make.
func (p *PodWorkers) stepLocked(w *worker, ev event) job {
	before := w.state.phase()
	next, eff := transition(w.state, ev)
	w.state = next
	uid := next.uid

	if after := next.phase(); eff.forget || after != before {
		p.phases.add(before, -1)
		if !eff.forget {
			p.phases.add(after, 1)
			p.log.V(2).Info("Pod worker phase changed", "pod", next.fullName, "podUID", uid, "from", before, "to", after)
		}
		p.metrics.WorkerPhases(p.phases)
	}
	for _, ch := range eff.notify {
		close(ch)
	}
	if eff.cancel && w.cancel != nil {
		w.cancel()
	}
	depth := p.queue.len()
	if eff.requeue != requeueNone {
		p.queue.add(uid, p.clock.Now().Add(p.delay(eff.requeue)))
	}
	if eff.dequeue {
		p.queue.remove(uid)
	}
	if n := p.queue.len(); n != depth {
		p.metrics.QueueDepth(n)
	}
	if eff.holdGate && next.static {
		p.gate.hold(next.fullName, uid)
	}
	if eff.leaveGate && next.static {
		if nextUID, ok := p.gate.leave(next.fullName, uid); ok {
			if nw, ok := p.workers[nextUID]; ok {
				p.wakeLocked(nw) // its turn: no backoff, no polling
			}
		}
	}
	if eff.forget && p.workers[uid] == w {
		delete(p.workers, uid)
		p.log.V(4).Info("Pod worker forgotten", "pod", next.fullName, "podUID", uid)
	}
	if eff.exit {
		p.endLocked(w)
	}
	if eff.wake {
		p.wakeLocked(w)
	}
	return eff.run
}

func (p *PodWorkers) delay(r requeue) time.Duration {
	switch r {
	case requeueResync:
		return p.jitter(p.resync)
	case requeueBackoff:
		return p.jitter(p.backoff)
	case requeueSoon:
		return p.jitter(p.shortBackoff)
	}
	return 0
}
