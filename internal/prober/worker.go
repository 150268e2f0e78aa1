package prober

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// worker probes one probe of one container instance until its context
// ends. Only its goroutine touches its fields after it starts, but for
// those Manager reads under its lock, which never change.
type worker struct {
	m         *Manager
	uid       types.UID
	pod       string
	namespace string
	kind      Kind
	spec      *corev1.Probe
	target    target
	// hasStartup: the container has a startup probe, which holds this
	// (liveness or readiness) probe back until it has succeeded.
	hasStartup bool
	startedAt  time.Time
	grace      int64
	cancel     context.CancelFunc
	// wake makes it probe at once instead of at the end of its wait: a
	// readiness probe held back by a startup probe that has just passed.
	wake chan struct{}

	// last is the newest outcome, streak how many in a row it has been.
	last   Result
	streak int
	// onHold: it failed for good (liveness, startup); the instance awaits
	// its kill, and nothing more is probed.
	onHold bool
	// warned is the last warning reported for this instance.
	warned string
	series workerSeries
}

// run probes at the end of the initial delay (at once if it has passed),
// then every period, and whenever it is woken.
func (w *worker) run(ctx context.Context) {
	due := w.startedAt.Add(time.Duration(w.spec.InitialDelaySeconds) * time.Second)
	period := time.Duration(w.spec.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	for {
		now := w.m.clock.Now()
		if wait := due.Sub(now); wait > 0 {
			t := w.m.clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			case <-w.wake:
				t.Stop()
				due = w.m.clock.Now()
			}
		} else if ctx.Err() != nil {
			return
		} else {
			due = now // the delay ended before this worker began
		}
		w.step(ctx, due)
		due = w.m.clock.Now().Add(period)
	}
}

// step runs the probe once, if it is due, and turns the outcome into a
// result once enough agree. due is when it was due.
func (w *worker) step(ctx context.Context, due time.Time) {
	if w.onHold {
		return
	}
	switch {
	case w.kind == Startup && w.m.Started(w.target.containerID):
		return // it has done its work for this instance
	case w.kind != Startup && w.hasStartup && !w.m.Started(w.target.containerID):
		return
	}
	began := w.m.clock.Now()
	r, msg := w.m.probe(ctx, w.spec, w.target, w.m.podIP(w.uid))
	if ctx.Err() != nil {
		return // ended meanwhile: the outcome may be the end's doing
	}
	if r == successWithWarning {
		w.warn(ctx, msg)
		r = Success
	}
	ran := w.m.clock.Now()
	w.m.metrics.observe(w, r, ran.Sub(began))
	if r == w.last {
		w.streak++
	} else {
		w.last, w.streak = r, 1
	}
	threshold := w.spec.SuccessThreshold
	if r == Failure {
		threshold = w.spec.FailureThreshold
	}
	if int32(min(w.streak, 1<<30)) < max(threshold, 1) { // #nosec G115 -- clamped
		return
	}
	if r == Failure && w.kind != Readiness {
		w.onHold = true
	}
	if !w.m.set(w, r, msg) {
		return
	}
	w.m.log.V(2).Info("Probe result changed", "pod", w.namespace+"/"+w.pod, "container", w.target.container,
		"probe", w.kind, "result", r, "message", msg)
	select {
	case w.m.updates <- Update{PodUID: w.uid, Container: w.target.container, ContainerID: w.target.containerID, Kind: w.kind, Result: r, Message: msg, Due: due, Ran: ran}:
	case <-ctx.Done():
	}
}

// warn reports a warning the probe's success carried, unless it is the
// one reported last: a probe that warns at every period says it once.
func (w *worker) warn(ctx context.Context, msg string) {
	if msg == w.warned {
		return
	}
	w.warned = msg
	w.m.log.V(2).Info("Probe succeeded with a warning", "pod", w.namespace+"/"+w.pod, "container", w.target.container,
		"probe", w.kind, "warning", msg)
	select {
	case w.m.updates <- Update{PodUID: w.uid, Container: w.target.container, ContainerID: w.target.containerID, Kind: w.kind, Result: Success, Message: msg, Warning: true}:
	case <-ctx.Done():
	}
}
