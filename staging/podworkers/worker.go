package podworkers

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
)

// spawnLocked starts w's goroutine once Run has been called.
func (p *PodWorkers) spawnLocked(w *worker) {
	if w.spawned || w.gone || p.runCtx == nil {
		return
	}
	w.spawned = true
	w.ctx = logr.NewContext(p.runCtx, p.log.WithValues("pod", w.state.fullName, "podUID", w.state.uid))
	p.goroutines++
	p.wg.Add(1)
	go p.runWorker(w)
	if w.working {
		w.wake <- struct{}{} // the channel is new and empty
	}
}

// wakeLocked tells w's goroutine that its record has work.
func (p *PodWorkers) wakeLocked(w *worker) {
	if w.gone {
		return
	}
	p.signalLocked(w)
}

func (p *PodWorkers) signalLocked(w *worker) {
	if !w.working {
		w.working = true
		p.working++
	}
	if w.spawned {
		select {
		case w.wake <- struct{}{}:
		default: // a wake-up is queued already
		}
	}
}

// endLocked marks w's goroutine to end, waking it if it is idle so that it
// sees the mark.
func (p *PodWorkers) endLocked(w *worker) {
	if w.gone {
		return
	}
	w.gone = true
	switch {
	case !w.spawned:
		p.idleLocked(w) // no goroutine will ever look at it
	case !w.working:
		p.signalLocked(w)
	}
}

// exitLocked is the goroutine's last act.
func (p *PodWorkers) exitLocked(w *worker) {
	p.idleLocked(w)
	p.goroutines--
}

func (p *PodWorkers) idleLocked(w *worker) {
	if w.working {
		w.working = false
		p.working--
	}
}

// runWorker is w's goroutine. It takes work until there is none, sleeps
// until woken, and ends when its pod is finished or forgotten, or Run ends.
func (p *PodWorkers) runWorker(w *worker) {
	defer p.wg.Done()
	for {
		select {
		case <-w.ctx.Done():
			p.mu.Lock()
			p.exitLocked(w)
			p.mu.Unlock()
			return
		case <-w.wake:
		}
		for {
			j, ctx, exit := p.take(w)
			if exit {
				return
			}
			if j.work == workNone {
				break
			}
			terminal, took, err := p.call(ctx, j)
			if p.complete(w, j, terminal, took, err) {
				return
			}
		}
	}
}

// take hands w's pending update to the transition function and returns the
// Syncer call to make, with a context that a kill can cancel.
func (p *PodWorkers) take(w *worker) (job, context.Context, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.wake: // about to look at the record; a queued wake-up is stale
	default:
	}
	if w.gone || w.ctx.Err() != nil {
		p.exitLocked(w)
		return job{}, nil, true
	}
	open := w.state.needsGate() && p.gate.tryStart(w.state.fullName, w.state.uid)
	j := p.stepLocked(w, event{kind: evTake, gateOpen: open})
	if w.gone {
		p.exitLocked(w)
		return job{}, nil, true
	}
	if j.work == workNone {
		p.idleLocked(w)
		return j, nil, false
	}
	ctx, cancel := context.WithCancel(w.ctx)
	w.cancel = cancel
	return j, ctx, false
}

// call makes one Syncer call, without holding the lock.
func (p *PodWorkers) call(ctx context.Context, j job) (terminal bool, took time.Duration, err error) {
	start := p.clock.Now()
	switch j.work {
	case WorkSync:
		terminal, err = p.syncer.SyncPod(ctx, j.typ, j.pod)
	case WorkTerminating:
		err = p.syncer.SyncTerminatingPod(ctx, j.pod, j.grace, j.statusFn)
	case WorkTerminatingRuntime:
		err = p.syncer.SyncTerminatingRuntimePod(ctx, j.runtime)
	case WorkTerminated:
		err = p.syncer.SyncTerminatedPod(ctx, j.pod)
	}
	return terminal, p.clock.Since(start), err
}

// complete hands the call's result to the transition function and reports
// whether the goroutine should end.
func (p *PodWorkers) complete(w *worker, j job, terminal bool, took time.Duration, err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.cancel()
	w.cancel = nil
	p.metrics.ObserveSync(j.work, took)
	if err != nil && !errors.Is(err, context.Canceled) {
		p.log.Error(err, "Pod sync failed", "pod", w.state.fullName, "podUID", w.state.uid, "work", j.work)
	}
	p.stepLocked(w, event{kind: evDone, terminal: terminal, err: err})
	if w.gone {
		p.exitLocked(w)
		return true
	}
	return false
}
