package podworkers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These tests drive the transition function by hand: no goroutine, no
// lock, no clock. Each case replays events from a new record and checks
// the record and the effects of the last event.

func specV(v int) *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "web", Namespace: "default", ResourceVersion: fmt.Sprint(v)},
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}
}

func upd(t UpdateType, v int) event {
	return event{kind: evUpdate, update: UpdatePodOptions{Type: t, Pod: specV(v)}}
}

func kill(v int, grace int64) event {
	k := &KillPodOptions{}
	if grace >= 0 {
		k.GracePeriodOverride = &grace
	}
	return event{kind: evUpdate, update: UpdatePodOptions{Type: Kill, Pod: specV(v), Kill: k}}
}

func killDone(v int, ch chan struct{}) event {
	return event{kind: evUpdate, update: UpdatePodOptions{Type: Kill, Pod: specV(v), Kill: &KillPodOptions{Completed: ch}}}
}

func killMayBeRunning(v int, grace int64) event {
	return event{kind: evUpdate, update: UpdatePodOptions{Type: Kill, Pod: specV(v),
		Kill: &KillPodOptions{GracePeriodOverride: &grace, MayBeRunning: true}}}
}

func runtimeKill() event {
	return event{kind: evUpdate, update: UpdatePodOptions{Type: Kill, RuntimePod: &RuntimePod{UID: "a", Name: "web", Namespace: "default"}}}
}

var (
	take      = event{kind: evTake}
	takeOpen  = event{kind: evTake, gateOpen: true}
	ok        = event{kind: evDone}
	terminal  = event{kind: evDone, terminal: true}
	canceled  = event{kind: evDone, err: context.Canceled}
	failed    = event{kind: evDone, err: errors.New("boom")}
	netDown   = event{kind: evDone, err: fmt.Errorf("cni: %w", ErrNetworkNotReady)}
	transient = event{kind: evDone, err: fmt.Errorf("name reserved: %w", ErrTransient)}
	orphaned  = event{kind: evHousekeep}
	desired   = event{kind: evHousekeep, desired: true}
)

// view is the part of a record and its effects a case states.
type view struct {
	Phase                                 Phase
	Started, Requested, TermStarted       bool
	Finished, Deleted, Evicted, Restart   bool
	Grace                                 int64
	Pending                               string // "type v" or ""
	InFlight                              Work
	Run                                   string // "work type v grace" or ""
	Wake, Cancel, LeaveGate, Exit, Forget bool
	HoldGate, Dequeue                     bool
	Requeue                               requeue
	Notified                              int
}

func viewOf(s podState, eff effects) view {
	v := view{
		Phase: s.phase(), Started: s.started, Requested: s.terminationRequested, TermStarted: s.terminationStarted,
		Finished: s.finished, Deleted: s.deleted, Evicted: s.evicted, Restart: s.restartRequested,
		Grace: s.gracePeriod, InFlight: s.inFlight,
		Wake: eff.wake, Cancel: eff.cancel, LeaveGate: eff.leaveGate, HoldGate: eff.holdGate, Exit: eff.exit, Forget: eff.forget,
		Dequeue: eff.dequeue, Requeue: eff.requeue, Notified: len(eff.notify),
	}
	if s.hasPending {
		v.Pending = fmt.Sprintf("%v %s", s.pending.typ, version(s.pending.pod))
	}
	if r := eff.run; r.work != workNone {
		v.Run = fmt.Sprintf("%v %v %s %d", r.work, r.typ, version(r.pod), r.grace)
	}
	return v
}

func version(p *corev1.Pod) string {
	if p == nil {
		return "-"
	}
	return "v" + p.ResourceVersion
}

func replay(s podState, events ...event) (podState, effects) {
	var eff effects
	for _, ev := range events {
		s, eff = transition(s, ev)
	}
	return s, eff
}

func TestTransition(t *testing.T) {
	running := []event{upd(Create, 1), take, ok} // started, SyncPod done
	seq := func(groups ...[]event) []event {
		var out []event
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	tests := []struct {
		name   string
		static bool
		events []event
		want   view
	}{{
		name:   "create wakes the worker",
		events: []event{upd(Create, 1)},
		want:   view{Pending: "create v1", Wake: true},
	}, {
		name:   "take starts the pod and calls SyncPod",
		events: []event{upd(Create, 1), take},
		want:   view{Started: true, InFlight: WorkSync, Run: "sync create v1 0"},
	}, {
		name:   "updates to a busy worker: the newest replaces the pending one",
		events: []event{upd(Create, 1), take, upd(Update, 2), upd(Sync, 3), upd(Update, 4)},
		want:   view{Started: true, InFlight: WorkSync, Pending: "update v4", Wake: true},
	}, {
		name:   "a kill cancels a running SyncPod",
		events: []event{upd(Create, 1), take, kill(1, -1)},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, Grace: 30, InFlight: WorkSync,
			Pending: "kill v1", Wake: true, Cancel: true},
	}, {
		name:   "a pending kill is not replaced by a later update, only its spec refreshed",
		events: []event{upd(Create, 1), take, kill(1, -1), upd(Update, 2), upd(Sync, 3)},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, Grace: 30, InFlight: WorkSync,
			Pending: "kill v3", Wake: true},
	}, {
		name:   "a create after a kill is refused and remembered",
		events: []event{upd(Create, 1), take, kill(1, -1), upd(Create, 2)},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, Restart: true, Grace: 30,
			InFlight: WorkSync, Pending: "kill v1"},
	}, {
		name:   "a cancelled SyncPod is followed by the termination, with no backoff",
		events: []event{upd(Create, 1), take, kill(1, -1), canceled, take},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 30,
			InFlight: WorkTerminating, Run: "terminating kill v1 30"},
	}, {
		name:   "a cancelled call with nothing pending backs off",
		events: []event{upd(Create, 1), take, canceled},
		want:   view{Started: true, Requeue: requeueBackoff},
	}, {
		name:   "a healthy SyncPod resyncs",
		events: running,
		want:   view{Started: true, Requeue: requeueResync},
	}, {
		name:   "a failed SyncPod backs off",
		events: []event{upd(Create, 1), take, failed},
		want:   view{Started: true, Requeue: requeueBackoff},
	}, {
		name:   "a network that is not ready backs off briefly",
		events: []event{upd(Create, 1), take, netDown},
		want:   view{Started: true, Requeue: requeueSoon},
	}, {
		name:   "a transient failure backs off briefly",
		events: []event{upd(Create, 1), take, transient},
		want:   view{Started: true, Requeue: requeueSoon},
	}, {
		name:   "a terminal SyncPod starts termination at once",
		events: []event{upd(Create, 1), take, terminal},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, Grace: 30,
			Pending: "kill v1", Wake: true, Requeue: requeueNow},
	}, {
		name:   "a successful termination notifies and moves on at once",
		events: seq(running, []event{killDone(1, make(chan struct{})), take, ok}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Grace: 30,
			Pending: "kill v1", Wake: true, Requeue: requeueNow, Notified: 1, LeaveGate: true},
	}, {
		name:   "a failed termination backs off and keeps its waiters",
		events: seq(running, []event{killDone(1, make(chan struct{})), take, failed}),
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 30,
			Requeue: requeueBackoff},
	}, {
		name:   "cleanup done: the worker finishes and ends",
		events: seq(running, []event{kill(1, -1), take, ok, take, ok}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true,
			Grace: 30, Exit: true, LeaveGate: true, Dequeue: true},
	}, {
		name:   "a finished pod ignores updates",
		events: seq(running, []event{kill(1, -1), take, ok, take, ok, upd(Update, 2)}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true,
			Grace: 30},
	}, {
		name:   "a kill of a finished pod completes at once",
		events: seq(running, []event{kill(1, -1), take, ok, take, ok, killDone(1, make(chan struct{}))}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true,
			Grace: 30, Notified: 1},
	}, {
		name:   "a shorter grace period cancels a running termination",
		events: seq(running, []event{kill(1, 30), take, kill(1, 10)}),
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 10,
			InFlight: WorkTerminating, Pending: "kill v1", Wake: true, Cancel: true},
	}, {
		name:   "a longer grace period changes nothing",
		events: seq(running, []event{kill(1, 10), take, kill(1, 20)}),
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 10,
			InFlight: WorkTerminating, Pending: "kill v1", Wake: true},
	}, {
		name:   "a grace period of 0 stays 0",
		events: []event{upd(Create, 1), kill(1, 0)},
		want:   view{Phase: PhaseTerminating, Requested: true, Grace: 0, Pending: "kill v1", Wake: true},
	}, {
		name:   "a grace period of 0 in force is never lengthened",
		events: []event{upd(Create, 1), kill(1, 0), kill(1, 5)},
		want:   view{Phase: PhaseTerminating, Requested: true, Grace: 0, Pending: "kill v1", Wake: true},
	}, {
		name:   "a static pod waits while the gate is shut",
		static: true,
		events: []event{upd(Create, 1), take},
		want:   view{Pending: "create v1"},
	}, {
		name:   "a static pod starts when the gate opens",
		static: true,
		events: []event{upd(Create, 1), take, upd(Update, 2), takeOpen},
		want:   view{Started: true, InFlight: WorkSync, Run: "sync update v2 0"},
	}, {
		name:   "a static pod killed while waiting leaves the gate",
		static: true,
		events: []event{upd(Create, 1), take, kill(1, -1)},
		want:   view{Phase: PhaseTerminating, Requested: true, Grace: 30, Pending: "kill v1", Wake: true, LeaveGate: true},
	}, {
		name:   "a static pod killed while waiting finishes without a Syncer call",
		static: true,
		events: []event{upd(Create, 1), take, killDone(1, make(chan struct{})), take},
		want: view{Phase: PhaseTerminated, Requested: true, TermStarted: true, Finished: true, Grace: 30,
			Exit: true, LeaveGate: true, Dequeue: true, Notified: 1},
	}, {
		name:   "a static pod that may be running holds the gate from its kill",
		static: true,
		events: []event{killMayBeRunning(1, 3)},
		want:   view{Phase: PhaseTerminating, Requested: true, Grace: 3, Pending: "kill v1", Wake: true, HoldGate: true},
	}, {
		name:   "a static pod that may be running is terminated, not skipped",
		static: true,
		events: []event{killMayBeRunning(1, 3), take},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 3,
			InFlight: WorkTerminating, Run: "terminating kill v1 3"},
	}, {
		name:   "a waiting static pod that may be running stays in the gate",
		static: true,
		events: []event{upd(Create, 1), take, killMayBeRunning(1, 0)},
		want:   view{Phase: PhaseTerminating, Requested: true, Grace: 0, Pending: "kill v1", Wake: true, HoldGate: true},
	}, {
		name:   "a static pod that may be running leaves the gate once cleaned up",
		static: true,
		events: []event{killMayBeRunning(1, 3), take, ok, take, ok},
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true, Grace: 3,
			Exit: true, LeaveGate: true, Dequeue: true},
	}, {
		name:   "a pod killed before its first sync is terminated, not started",
		events: []event{upd(Create, 1), kill(1, -1), take},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 30,
			InFlight: WorkTerminating, Run: "terminating kill v1 30"},
	}, {
		name:   "a runtime-only pod gets SyncTerminatingRuntimePod",
		events: []event{runtimeKill(), take},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Deleted: true,
			Grace: 30, InFlight: WorkTerminatingRuntime, Run: "terminating-runtime kill - 30"},
	}, {
		name:   "a runtime-only pod is forgotten once stopped",
		events: []event{runtimeKill(), take, ok},
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Deleted: true,
			Finished: true, Grace: 30, Forget: true, Exit: true, LeaveGate: true, Dequeue: true},
	}, {
		name:   "a runtime-only kill of a pod with a spec terminates the spec",
		events: seq(running, []event{runtimeKill(), take}),
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Grace: 30,
			InFlight: WorkTerminating, Run: "terminating kill v1 30"},
	}, {
		name:   "an orphan that never started is forgotten",
		events: []event{upd(Create, 1), orphaned},
		want:   view{Deleted: true, Forget: true, Exit: true, LeaveGate: true, Dequeue: true},
	}, {
		name:   "an orphan that runs is terminated; its SyncPod is cancelled",
		events: []event{upd(Create, 1), take, orphaned},
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, Deleted: true, Grace: 30,
			InFlight: WorkSync, Pending: "kill v1", Wake: true, Cancel: true},
	}, {
		name:   "an orphan whose termination failed is retried",
		events: seq(running, []event{kill(1, -1), take, failed, orphaned}),
		want: view{Phase: PhaseTerminating, Started: true, Requested: true, TermStarted: true, Deleted: true,
			Grace: 30, Pending: "kill v1", Wake: true},
	}, {
		name:   "a desired pod that finished after a refused create is forgotten",
		events: seq(running, []event{kill(1, -1), upd(Create, 2), take, ok, take, ok, desired}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true,
			Restart: true, Grace: 30, Forget: true, Exit: true, LeaveGate: true, Dequeue: true},
	}, {
		name:   "a desired finished pod is remembered",
		events: seq(running, []event{kill(1, -1), take, ok, take, ok, desired}),
		want: view{Phase: PhaseTerminated, Started: true, Requested: true, TermStarted: true, Finished: true,
			Grace: 30},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, eff := replay(newPodState("a", "web_default", tt.static), tt.events...)
			if diff := cmp.Diff(tt.want, viewOf(s, eff), cmp.AllowUnexported(view{})); diff != "" {
				t.Errorf("after %d events (-want +got):\n%s", len(tt.events), diff)
			}
		})
	}
}

// TestTransitionIsPure steps one record twice with different events: the
// record given must not change, and neither result may see the other.
func TestTransitionIsPure(t *testing.T) {
	s, _ := replay(newPodState("a", "web_default", false), upd(Create, 1), take, killDone(1, make(chan struct{})))
	before := viewOf(s, effects{})
	one, _ := transition(s, killDone(1, make(chan struct{})))
	two, _ := transition(s, killDone(1, make(chan struct{})))
	if diff := cmp.Diff(before, viewOf(s, effects{})); diff != "" {
		t.Errorf("transition changed its input (-before +after):\n%s", diff)
	}
	if len(s.notify) != 1 || len(one.notify) != 2 || len(two.notify) != 2 || one.notify[1] == two.notify[1] {
		t.Errorf("waiters leak between records: input %d, one %d, two %d", len(s.notify), len(one.notify), len(two.notify))
	}
}
