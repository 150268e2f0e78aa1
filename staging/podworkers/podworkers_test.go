package podworkers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewOptions(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New without a Syncer: err = %v, want ErrInvalidOptions", err)
	}
	if _, err := New(Options{Syncer: newHoldingSyncer(), BackoffPeriod: -time.Second}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New with a negative backoff: err = %v, want ErrInvalidOptions", err)
	}
	_, err := New(Options{ResyncInterval: -time.Minute, NetworkNotReadyBackoff: -time.Second})
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Errorf("New with three invalid options: err = %v, want the three reported at once", err)
	}
	for _, want := range []string{"Syncer is required", "ResyncInterval is negative", "NetworkNotReadyBackoff is negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with three invalid options: err = %v, want it to say %q", err, want)
		}
	}
	pw, err := New(Options{Syncer: newHoldingSyncer()})
	if err != nil {
		t.Fatal(err)
	}
	got := []time.Duration{pw.resync, pw.backoff, pw.shortBackoff}
	if diff := cmp.Diff([]time.Duration{time.Minute, 10 * time.Second, time.Second}, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	pw, _ = New(Options{Syncer: newHoldingSyncer(), ResyncInterval: 5 * time.Second})
	if pw.backoff != 5*time.Second {
		t.Errorf("backoff = %v, want it capped at the resync interval", pw.backoff)
	}
}

func TestDefaultJitter(t *testing.T) {
	for range 1000 {
		if d := defaultJitter(10 * time.Second); d < 10*time.Second || d >= 15*time.Second {
			t.Fatalf("defaultJitter(10s) = %v, want [10s, 15s)", d)
		}
	}
}

func TestUpdatePodRejects(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "web", Namespace: "default"}}
	tests := map[string]UpdatePodOptions{
		"no type":                   {Pod: pod},
		"unknown type":              {Type: 9, Pod: pod},
		"no pod":                    {Type: Create},
		"no uid":                    {Type: Create, Pod: &corev1.Pod{}},
		"kill options on an update": {Type: Update, Pod: pod, Kill: &KillPodOptions{}},
		"runtime pod not killed":    {Type: Sync, RuntimePod: &RuntimePod{UID: "x"}},
		"runtime pod without uid":   {Type: Kill, RuntimePod: &RuntimePod{Name: "x"}},
	}
	pw, err := New(Options{Syncer: newHoldingSyncer()})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range tests {
		if err := pw.UpdatePod(o); !errors.Is(err, ErrInvalidUpdate) {
			t.Errorf("%s: UpdatePod err = %v, want ErrInvalidUpdate", name, err)
		}
	}
	if n := len(pw.workers); n != 0 {
		t.Errorf("%d workers after invalid updates, want 0", n)
	}
}

// TestUpdatesBeforeRun: updates given before Run are kept and coalesced,
// and their workers start with Run.
func TestUpdatesBeforeRun(t *testing.T) {
	s := newHoldingSyncer()
	pw, err := New(Options{Syncer: s})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "web", Namespace: "default", ResourceVersion: "1"}}
	newer := pod.DeepCopy()
	newer.ResourceVersion = "2"
	for _, o := range []UpdatePodOptions{{Type: Create, Pod: pod}, {Type: Kill, Pod: pod}, {Type: Update, Pod: newer}} {
		if err := pw.UpdatePod(o); err != nil {
			t.Fatal(err)
		}
	}
	if got := pw.goroutines; got != 0 {
		t.Fatalf("%d goroutines before Run, want 0", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- pw.Run(ctx) }()
	waitFor(t, func() bool { return s.heldLive("a") })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := []string{"a: SyncTerminatingPod grace=30 v=2", "a: SyncTerminatingPod -> canceled"}
	if diff := cmp.Diff(want, s.take()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestRunEnds: ending Run's context cancels held calls, ends every worker
// goroutine and refuses later updates.
func TestRunEnds(t *testing.T) {
	e := newEnv(t)
	e.do("update uid=a name=web")
	e.do("update uid=b name=db")
	e.do("update uid=c name=web static")
	e.do("update uid=d name=web static") // waits for c
	if err := e.pw.Run(context.Background()); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
	e.close()
	if got := e.syncer.take(); len(got) != 3 {
		t.Errorf("calls after stop = %q, want the three held SyncPods cancelled", got)
	}
	if g, w := e.pw.goroutines, e.pw.working; g != 0 || w != 0 {
		t.Errorf("after Run returned: %d goroutines, %d working; want 0, 0", g, w)
	}
	err := e.pw.UpdatePod(UpdatePodOptions{Type: Sync, Pod: e.pods["a"]})
	if !errors.Is(err, ErrStopped) {
		t.Errorf("UpdatePod after stop = %v, want ErrStopped", err)
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	check := func(step string, want PhaseCounts, wantDepth int) {
		t.Helper()
		phases, depth, _ := e.metrics.snapshot()
		if diff := cmp.Diff(want, phases); diff != "" || depth != wantDepth {
			t.Errorf("%s: depth %d (want %d), phases (-want +got):\n%s", step, depth, wantDepth, diff)
		}
	}
	e.do("update uid=a name=web")
	e.do("update uid=b name=db")
	check("two created", PhaseCounts{Sync: 2}, 0)
	e.do("run")
	check("both synced", PhaseCounts{Sync: 2}, 2)
	e.do("kill uid=a")
	check("a killed", PhaseCounts{Sync: 1, Terminating: 1}, 2)
	e.do("release uid=a")
	check("a terminated", PhaseCounts{Sync: 1, Terminated: 1}, 2)
	e.do("release uid=a")
	check("a finished", PhaseCounts{Sync: 1, Terminated: 1}, 1)
	e.do("sync-known b")
	check("a forgotten", PhaseCounts{Sync: 1}, 1)
	e.clock.Step(2 * time.Minute)
	e.pw.DuePods()
	check("queue drained", PhaseCounts{Sync: 1}, 0)

	_, _, syncs := e.metrics.snapshot()
	var works []Work
	for _, s := range syncs {
		works = append(works, s.work)
	}
	if diff := cmp.Diff([]Work{WorkSync, WorkSync, WorkTerminating, WorkTerminated}, works); diff != "" {
		t.Errorf("observed syncs (-want +got):\n%s", diff)
	}
}

func TestStrings(t *testing.T) {
	got := []string{Create.String(), Kill.String(), UpdateType(0).String(), PhaseTerminating.String(),
		Phase(7).String(), WorkTerminatingRuntime.String(), Work(9).String()}
	want := []string{"create", "kill", "UpdateType(0)", "terminating", "Phase(7)", "terminating-runtime", "Work(9)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// waitFor polls cond; the bound only turns a hang into a failure.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// TestForgottenBeforeRun: a pod given and forgotten before Run leaves
// nothing behind: no goroutine is started for it and nothing stays busy.
func TestForgottenBeforeRun(t *testing.T) {
	pw, err := New(Options{Syncer: newHoldingSyncer()})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "web", Namespace: "default"}}
	if err := pw.UpdatePod(UpdatePodOptions{Type: Create, Pod: pod}); err != nil {
		t.Fatal(err)
	}
	if known := pw.SyncKnownPods(nil); len(known) != 0 {
		t.Fatalf("known = %v, want the unstarted orphan forgotten", known)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pw.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if pw.working != 0 || pw.goroutines != 0 {
		t.Errorf("working %d, goroutines %d; want 0, 0", pw.working, pw.goroutines)
	}
}
