package podworkers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nodeagent/nodeagent/staging/podtypes"
	corev1 "k8s.io/api/core/v1"
)

// This file is the pod lifecycle as a pure function, in the manner of
// etcd's raft: transition takes a pod's record and one event and returns the
// new record and the effects the shell must carry out (call the Syncer,
// wake the worker, cancel a call, close channels, requeue). It starts no
// goroutine and reads no clock, so every rule below is testable by hand.

type eventKind int

const (
	evUpdate    eventKind = iota + 1 // UpdatePod was called
	evTake                           // the worker is free and looks for work
	evDone                           // the Syncer call returned
	evHousekeep                      // SyncKnownPods looked at the pod
)

type event struct {
	kind     eventKind
	update   UpdatePodOptions // evUpdate
	gateOpen bool             // evTake: the start gate lets this static pod start
	terminal bool             // evDone: SyncPod reported a terminal phase
	err      error            // evDone
	desired  bool             // evHousekeep: the pod is in the desired set
}

// requeue says when the agent should look at the pod again.
type requeue int

const (
	requeueNone    requeue = iota
	requeueNow             // a phase changed
	requeueResync          // healthy: after the resync interval
	requeueBackoff         // failed: after the backoff period
	requeueSoon            // failed for want of a network, or transiently: after a short backoff
)

type effects struct {
	run       job               // a Syncer call to make, if run.work != workNone
	wake      bool              // the worker has a pending update to take
	cancel    bool              // cancel the in-flight Syncer call
	requeue   requeue           // put the pod in the work queue
	notify    []chan<- struct{} // close these: the pod's containers are stopped
	leaveGate bool              // the pod will not (or no longer) hold its full name
	holdGate  bool              // the pod must hold its full name now if it is free
	exit      bool              // the worker goroutine ends
	forget    bool              // drop the record; the UID may start afresh
	dequeue   bool              // drop the pod from the work queue
}

// job is one Syncer call.
type job struct {
	work     Work
	typ      UpdateType
	pod      *corev1.Pod
	runtime  RuntimePod
	grace    int64
	statusFn func(*corev1.PodStatus)
}

func transition(s podState, ev event) (podState, effects) {
	switch ev.kind {
	case evUpdate:
		return onUpdate(s, ev.update)
	case evTake:
		return onTake(s, ev.gateOpen)
	case evDone:
		return onDone(s, ev.terminal, ev.err)
	case evHousekeep:
		return onHousekeep(s, ev.desired)
	}
	panic(fmt.Sprintf("podworkers: unknown event kind %d", ev.kind))
}

func onUpdate(s podState, u UpdatePodOptions) (podState, effects) {
	var eff effects
	kill := u.Kill
	if kill == nil {
		kill = &KillPodOptions{}
	}
	in := podUpdate{typ: u.Type, pod: u.Pod}
	if in.pod == nil {
		// A kill of a pod found running in the runtime.
		s.observedRuntime = true
		if s.terminated {
			// Its containers are stopped already; the caller's view is stale.
			eff.notify = appendChan(nil, kill.Completed)
			return s, eff
		}
		if s.spec() == nil {
			in.runtime = u.RuntimePod
			s.deleted = true
		}
	}
	if s.finished || s.terminationRequested && u.Type == Create {
		// Termination cannot be undone. A Create for the same UID (a static
		// pod re-added with the same manifest) is remembered, so that
		// SyncKnownPods forgets the finished worker and the UID can start
		// afresh as a new worker.
		s.restartRequested = s.restartRequested || u.Type == Create
		eff.notify = appendChan(nil, kill.Completed)
		return s, eff
	}
	if in.pod != nil && in.pod.DeletionTimestamp != nil {
		s.deleted = true
	}
	if kill.Evict && !s.terminated {
		s.evicted = true
	}
	if kill.MayBeRunning && u.Type == Kill && !s.started {
		s.observedRuntime = true
	}
	became := !s.terminationRequested &&
		(u.Type == Kill || in.pod == nil || in.pod.DeletionTimestamp != nil || podtypes.IsTerminal(in.pod.Status.Phase))
	s.terminationRequested = s.terminationRequested || became
	shortened := false
	switch {
	case s.terminated:
		eff.notify = appendChan(nil, kill.Completed)
	case s.terminationRequested:
		if kill.Completed != nil {
			s.notify = append(slices.Clip(s.notify), kill.Completed)
		}
		if kill.StatusFunc != nil {
			s.statusFns = append(slices.Clip(s.statusFns), kill.StatusFunc)
		}
		pod := in.pod
		if pod == nil {
			pod = s.spec()
		}
		g := gracePeriod(s.gracePeriod, !became, pod, kill.GracePeriodOverride)
		shortened = !became && g < s.gracePeriod
		s.gracePeriod = g
	}
	if s.terminationRequested {
		in.typ = Kill // once killed, every update is a kill
	}
	if s.hasPending {
		in = s.pending.merge(in)
	}
	s.pending, s.hasPending = in, true
	eff.wake = true
	// A kill stops a SyncPod at once; a shorter grace period restarts a
	// SyncTerminatingPod with it.
	eff.cancel = became && s.inFlight == WorkSync || shortened && s.inFlight == WorkTerminating
	// A static pod killed before it started will never hold its name,
	// unless its containers may be running: then it holds the name until
	// they are stopped.
	eff.leaveGate = became && s.static && !s.started && !s.observedRuntime
	eff.holdGate = s.terminationRequested && s.static && !s.started && s.observedRuntime
	return s, eff
}

func onTake(s podState, gateOpen bool) (podState, effects) {
	var eff effects
	if !s.hasPending || s.finished || s.inFlight != workNone {
		return s, eff
	}
	if !s.started {
		switch {
		case s.static && s.terminationRequested && !s.observedRuntime:
			// Killed while waiting behind an older pod of the same name:
			// it never ran, so there is nothing to stop or clean up.
			s.pending, s.hasPending = podUpdate{}, false
			s.terminationStarted, s.terminated, s.finished = true, true, true
			eff.notify, s.notify, s.statusFns = s.notify, nil, nil
			eff.leaveGate, eff.exit, eff.dequeue = true, true, true
			return s, eff
		case s.static && !s.terminationRequested && !gateOpen:
			return s, eff // the gate wakes this worker when its turn comes
		}
		s.started = true
	}
	s.last = s.last.merge(s.pending)
	s.pending, s.hasPending = podUpdate{}, false
	w := s.nextWork()
	s.terminationStarted = s.terminationStarted || w != WorkSync
	s.inFlight = w
	eff.run = job{work: w, typ: s.last.typ, pod: s.last.pod, grace: s.gracePeriod}
	switch w {
	case WorkTerminatingRuntime:
		eff.run.runtime = *s.last.runtime
	case WorkTerminating:
		eff.run.statusFn = chainStatus(s.statusFns)
	}
	return s, eff
}

func onDone(s podState, terminal bool, err error) (podState, effects) {
	var eff effects
	work := s.inFlight
	s.inFlight = workNone
	switch {
	case errors.Is(err, context.Canceled) && s.hasPending:
		// Cancelled by the update now pending, which runs next.
	case errors.Is(err, ErrNetworkNotReady), errors.Is(err, ErrTransient):
		eff.requeue = requeueSoon
	case err != nil:
		eff.requeue = requeueBackoff
	case work == WorkSync && terminal:
		if !s.terminationRequested {
			s.terminationRequested = true
			s.gracePeriod = gracePeriod(0, false, s.last.pod, nil)
		}
		s.requeueLast(&eff)
		eff.requeue = requeueNow
	case work == WorkSync:
		eff.requeue = requeueResync
	case work == WorkTerminating:
		s.terminated = true
		eff.notify, s.notify, s.statusFns = s.notify, nil, nil
		s.requeueLast(&eff)
		eff.requeue = requeueNow
		// No container of the pod runs: the next pod of its full name may
		// start while this one is cleaned up.
		eff.leaveGate = true
	case work == WorkTerminatingRuntime:
		// Nothing but containers was ever known of this pod: once they are
		// stopped there is nothing to clean up or remember.
		s.terminated, s.finished = true, true
		eff = s.forget()
	case work == WorkTerminated:
		s.finished = true
		s.pending, s.hasPending = podUpdate{}, false
		eff.leaveGate, eff.exit, eff.dequeue = true, true, true
	}
	return s, eff
}

func onHousekeep(s podState, desired bool) (podState, effects) {
	var eff effects
	if desired {
		if s.finished && s.restartRequested {
			eff = s.forget()
		}
		return s, eff
	}
	// No longer desired: nobody else will drive this pod to its end.
	s.deleted = true
	switch {
	case s.finished, !s.started && !s.observedRuntime:
		eff = s.forget()
	case !s.terminationRequested:
		s.terminationRequested = true
		s.gracePeriod = gracePeriod(0, false, s.spec(), nil)
		eff.cancel = s.inFlight == WorkSync
		s.requeueLast(&eff)
	case s.inFlight == workNone:
		s.requeueLast(&eff) // retry a termination that failed
	}
	return s, eff
}

// requeueLast makes the worker run again with the spec in force, unless a
// newer update is already pending.
func (s *podState) requeueLast(eff *effects) {
	if !s.hasPending {
		s.pending, s.hasPending = s.last, true
		if s.terminationRequested {
			s.pending.typ = Kill
		}
	}
	eff.wake = true
}

// forget ends the record: the shell drops it and the UID may start afresh.
func (s *podState) forget() effects {
	eff := effects{forget: true, exit: true, leaveGate: true, dequeue: true, notify: s.notify}
	s.notify, s.statusFns = nil, nil
	s.pending, s.hasPending = podUpdate{}, false
	return eff
}

func appendChan(chans []chan<- struct{}, ch chan<- struct{}) []chan<- struct{} {
	if ch == nil {
		return chans
	}
	return append(chans, ch)
}
