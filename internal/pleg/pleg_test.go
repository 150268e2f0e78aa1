package pleg

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeRuntime serves a settable list of pods; a pod's status is derived
// from it.
type fakeRuntime struct {
	mu        sync.Mutex
	pods      []*runtime.Pod
	listErr   error
	statusErr map[types.UID]error
	fetched   []types.UID
	lists     int
}

func (f *fakeRuntime) set(pods ...*runtime.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func (f *fakeRuntime) GetPods(context.Context) ([]*runtime.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return f.pods, f.listErr
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID) (*runtime.PodStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetched = append(f.fetched, uid)
	if err := f.statusErr[uid]; err != nil {
		return nil, err
	}
	s := &runtime.PodStatus{ID: uid}
	for _, p := range f.pods {
		if p.ID == uid {
			for _, c := range p.Containers {
				s.Containers = append(s.Containers, runtime.ContainerStatus{ID: c.ID, Name: c.Name, State: c.State})
			}
		}
	}
	return s, nil
}

func (f *fakeRuntime) takeFetched() []types.UID {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.fetched
	f.fetched = nil
	return out
}

// harness runs a PLEG with a fake clock in the background.
type harness struct {
	t     *testing.T
	rt    *fakeRuntime
	clock *testingclock.FakeClock
	p     *PLEG
	stop  func()
}

func start(t *testing.T, rt *fakeRuntime) *harness {
	t.Helper()
	return startWith(t, Options{Runtime: rt})
}

// startWith starts a PLEG with opts, a fake clock and a 1 s interval.
func startWith(t *testing.T, opts Options) *harness {
	t.Helper()
	return startWatched(t, opts, nil)
}

// startWatched is startWith, with watched (if not nil) in place of the
// exit watch's say on which containers it waits on: the fake runtime has
// no processes to watch.
func startWatched(t *testing.T, opts Options, watched func(id string) bool) *harness {
	t.Helper()
	rt := opts.Runtime.(*fakeRuntime)
	clk := testingclock.NewFakeClock(t0)
	opts.Clock, opts.Interval = clk, time.Second
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if watched != nil {
		p.watched = watched
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	h := &harness{t: t, rt: rt, clock: clk, p: p}
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	}
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
	})
	h.waitIdle()
	return h
}

// waitIdle waits until the loop sleeps on its timer, i.e. a relist is done.
func (h *harness) waitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !h.clock.HasWaiters() {
		if time.Now().After(deadline) {
			h.t.Fatal("the relist loop did not come to rest")
		}
		time.Sleep(time.Millisecond)
	}
}

// tick lets the interval pass and waits for the relist it triggers.
func (h *harness) tick() {
	h.t.Helper()
	lists := func() int {
		h.rt.mu.Lock()
		defer h.rt.mu.Unlock()
		return h.rt.lists
	}
	before := lists()
	h.clock.Step(time.Second)
	// The relist the timer triggers has begun once the runtime is listed;
	// it is over once the loop waits on its next timer.
	deadline := time.Now().Add(5 * time.Second)
	for lists() == before {
		if time.Now().After(deadline) {
			h.t.Fatal("no relist after the interval")
		}
		time.Sleep(time.Millisecond)
	}
	h.waitIdle()
}

func (h *harness) drain() []PodLifecycleEvent {
	var out []PodLifecycleEvent
	for {
		select {
		case e := <-h.p.Events():
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestPLEGRelists(t *testing.T) {
	rt := &fakeRuntime{}
	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning)))
	h := start(t, rt)

	want := []PodLifecycleEvent{
		{ID: "u1", Type: PodSandboxChanged, Data: "s1"},
		{ID: "u1", Type: ContainerStarted, Data: "c1"},
	}
	if diff := cmp.Diff(want, h.drain()); diff != "" {
		t.Errorf("first relist (-want +got):\n%s", diff)
	}
	if s, _ := h.p.Cache().Get("u1"); len(s.Containers) != 1 || s.Containers[0].State != runtime.ContainerStateRunning {
		t.Errorf("cached status = %+v, want c1 running", s)
	}
	if err := h.p.Healthy(); err != nil {
		t.Errorf("Healthy: %v", err)
	}
	rt.takeFetched()

	// Nothing changes: no event, no status fetch, but the cache is
	// confirmed as of the new relist.
	h.tick()
	if got := h.drain(); len(got) != 0 {
		t.Errorf("events without a change: %v", got)
	}
	if got := rt.takeFetched(); len(got) != 0 {
		t.Errorf("statuses fetched without a change: %v", got)
	}
	if _, err := h.p.Cache().GetNewerThan(context.Background(), "u1", t0.Add(500*time.Millisecond)); err != nil {
		t.Error(err)
	}

	// The container dies; a second pod appears.
	rt.set(
		pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateExited)),
		pod("u2", nil, ctr("c2", runtime.ContainerStateCreated)),
	)
	h.tick()
	want = []PodLifecycleEvent{{ID: "u1", Type: ContainerDied, Data: "c1"}, {ID: "u2", Type: ContainerChanged, Data: "c2"}}
	if diff := cmp.Diff(want, h.drain()); diff != "" {
		t.Errorf("after the change (-want +got):\n%s", diff)
	}
	if got := rt.takeFetched(); !cmp.Equal(got, []types.UID{"u1", "u2"}) {
		t.Errorf("statuses fetched: %v, want u1 and u2", got)
	}

	// Stopping closes the event channel.
	h.stop()
	h.stop = nil
	if _, open := <-h.p.Events(); open {
		t.Error("events channel still open after Run returned")
	}
}

// A worker that acted on a pod stores the status it fetched afterwards; a
// relist that sees exactly that takes it as current and does not fetch the
// pod again, but still reports the events. A status that shows less is
// fetched as before.
func TestPLEGTrustsAStatusThatShowsTheChange(t *testing.T) {
	rt := &fakeRuntime{}
	h := start(t, rt)
	rt.takeFetched()

	rt.set(
		pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning)),
		pod("u2", sb("s2", runtime.SandboxReady), ctr("c2", runtime.ContainerStateRunning)),
	)
	workerSaw := &runtime.PodStatus{
		ID:         "u1",
		Sandboxes:  []runtime.SandboxStatus{{ID: "s1", State: runtime.SandboxReady}},
		Containers: []runtime.ContainerStatus{{ID: "c1", Name: "app", State: runtime.ContainerStateRunning}},
	}
	stale := &runtime.PodStatus{ID: "u2", Sandboxes: []runtime.SandboxStatus{{ID: "s2", State: runtime.SandboxReady}}}
	h.p.Cache().Set("u1", workerSaw, nil, t0.Add(time.Millisecond))
	h.p.Cache().Set("u2", stale, nil, t0.Add(time.Millisecond))
	h.tick()

	if got := rt.takeFetched(); !cmp.Equal(got, []types.UID{"u2"}) {
		t.Errorf("statuses fetched: %v, want only u2 (u1's cached status shows what the relist saw)", got)
	}
	want := []PodLifecycleEvent{
		{ID: "u1", Type: PodSandboxChanged, Data: "s1"}, {ID: "u1", Type: ContainerStarted, Data: "c1"},
		{ID: "u2", Type: PodSandboxChanged, Data: "s2"}, {ID: "u2", Type: ContainerStarted, Data: "c2"},
	}
	if diff := cmp.Diff(want, h.drain()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if s, err := h.p.Cache().GetNewerThan(context.Background(), "u1", t0.Add(500*time.Millisecond)); err != nil || s != workerSaw {
		t.Errorf("u1 after the relist: %+v, %v; want the worker's status, current as of the relist", s, err)
	}
	if s, _ := h.p.Cache().Get("u2"); len(s.Containers) != 1 {
		t.Errorf("u2 after the relist: %+v, want c2 fetched", s)
	}
}

func TestPLEGReinspectsAfterAFailedFetch(t *testing.T) {
	rt := &fakeRuntime{statusErr: map[types.UID]error{"u1": errors.New("runtime busy")}}
	rt.set(pod("u1", nil, ctr("c1", runtime.ContainerStateRunning)))
	h := start(t, rt)
	if _, err := h.p.Cache().Get("u1"); err == nil {
		t.Error("the failed fetch is not in the cache")
	}
	rt.takeFetched()
	rt.mu.Lock()
	rt.statusErr = nil
	rt.mu.Unlock()
	h.tick()
	if got := rt.takeFetched(); !cmp.Equal(got, []types.UID{"u1"}) {
		t.Errorf("fetched %v, want u1 again although nothing changed", got)
	}
	if s, err := h.p.Cache().Get("u1"); err != nil || len(s.Containers) != 1 {
		t.Errorf("cache after the retry: %+v, %v", s, err)
	}
}

func TestPLEGUnhealthyWhenListingFails(t *testing.T) {
	rt := &fakeRuntime{listErr: errors.New("socket gone")}
	h := start(t, rt)
	if err := h.p.Healthy(); err == nil {
		t.Error("healthy without any successful relist")
	}
	rt.mu.Lock()
	rt.listErr = nil
	rt.mu.Unlock()
	h.tick()
	if err := h.p.Healthy(); err != nil {
		t.Errorf("Healthy after a relist: %v", err)
	}
	rt.mu.Lock()
	rt.listErr = errors.New("socket gone")
	rt.mu.Unlock()
	for range 181 {
		h.tick()
	}
	if err := h.p.Healthy(); err == nil {
		t.Error("healthy after three minutes of failed relists")
	}
}

func TestPLEGRunTwice(t *testing.T) {
	h := start(t, &fakeRuntime{})
	if err := h.p.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
}

// An exit the watch saw makes a relist at once, and relists every
// exitRecheck while the runtime still lists the container running; once
// it lists it exited, the relists are an Interval apart again.
func TestPLEGRelistsAtOnceOnAnExit(t *testing.T) {
	rt := &fakeRuntime{}
	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning)))
	h := startWith(t, Options{Runtime: rt, ContainerPID: func(context.Context, string) (int, error) {
		return 0, errors.New("no processes here")
	}})
	h.drain()
	lists := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.lists
	}
	waitLists := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); lists() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d relists, want %d", lists(), n)
			}
		}
		h.waitIdle()
	}
	n := lists()
	if got := h.p.Process("c1"); got != ProcessUnwatched {
		t.Fatalf("Process(c1) = %q before the exit, want unwatched (the fake has no PIDs)", got)
	}
	h.p.containerExited("c1")
	h.clock.Step(exitRecheck) // an exit relists exitRecheck after the last relist at the earliest
	waitLists(n + 1)
	if got := h.p.Process("c1"); got != ProcessExited {
		t.Fatalf("Process(c1) = %q while the runtime lists it running, want exited", got)
	}
	if got := h.drain(); len(got) != 0 {
		t.Fatalf("events %v while the runtime still lists c1 running", got)
	}
	h.clock.Step(exitRecheck)
	waitLists(n + 2)
	h.clock.Step(exitRecheck) // the recheck backs off: not yet
	time.Sleep(20 * time.Millisecond)
	if got := lists(); got != n+2 {
		t.Fatalf("%d relists, want %d: the second recheck waits twice as long", got, n+2)
	}
	h.clock.Step(exitRecheck)
	waitLists(n + 3)

	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateExited)))
	h.clock.Step(4 * exitRecheck)
	waitLists(n + 4)
	want := []PodLifecycleEvent{{ID: "u1", Type: ContainerDied, Data: "c1"}}
	if got := h.drain(); !cmp.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if got := h.p.Process("c1"); got != ProcessUnwatched {
		t.Fatalf("Process(c1) = %q once the runtime lists the exit, want unwatched", got)
	}
	h.clock.Step(8 * exitRecheck)
	time.Sleep(20 * time.Millisecond)
	if got := lists(); got != n+4 {
		t.Fatalf("%d relists after the exit was listed, want %d: the interval again", got, n+4)
	}
}

// A runtime that goes on listing running a container whose process the
// watch saw exit is not the one whose processes the agent sees: after
// exitRecheckFor the watch is turned off.
func TestPLEGTurnsTheExitWatchOffWhenTheRuntimeNeverAgrees(t *testing.T) {
	rt := &fakeRuntime{}
	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning)))
	h := startWith(t, Options{Runtime: rt, ContainerPID: func(context.Context, string) (int, error) {
		return 0, errors.New("no processes here")
	}})
	h.p.containerExited("c1")
	for deadline := time.Now().Add(10 * time.Second); ; {
		h.waitIdle()
		h.p.exitsMu.Lock()
		left := len(h.p.exited)
		h.p.exitsMu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exit is still awaited")
		}
		h.clock.Step(time.Second)
	}
	if !h.p.exits.Off() {
		t.Fatal("the exit watch is still on")
	}
}

// While the exit watch waits on every running container, the relists are
// WatchedInterval apart; the check at each Interval relists at once when a
// container is no longer watched, and Interval apart from then on.
func TestPLEGRelistsSeldomWhileTheWatchCoversEveryContainer(t *testing.T) {
	rt := &fakeRuntime{}
	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning), ctr("c2", runtime.ContainerStateExited)))
	var mu sync.Mutex
	unwatched := map[string]bool{}
	watched := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return !unwatched[id]
	}
	h := startWatched(t, Options{Runtime: rt, WatchedInterval: 5 * time.Second, Registry: metrics.NewKubeRegistry(),
		ContainerPID: func(context.Context, string) (int, error) { return 0, errors.New("no processes here") }}, watched)
	lists := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.lists
	}
	step := func(d time.Duration, want int) {
		t.Helper()
		h.clock.Step(d)
		for deadline := time.Now().Add(5 * time.Second); lists() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d relists, want %d", lists(), want)
			}
		}
		h.waitIdle()
		time.Sleep(20 * time.Millisecond) // a relist too many would show now
		if got := lists(); got != want {
			t.Fatalf("%d relists, want %d", got, want)
		}
	}
	n := lists()
	step(time.Second, n+1) // the first relist fetched u1's status
	n++
	for range 4 {
		step(time.Second, n) // covered: each Interval only checks
		// ... and the check shows the PLEG active, as a relist would.
		if got, err := testutil.GetGaugeMetricValue(h.p.metrics.lastSeen); err != nil || got != float64(h.clock.Now().Unix()) {
			t.Fatalf("kubelet_pleg_last_seen_seconds = %v (%v), want %d: the check's time", got, err, h.clock.Now().Unix())
		}
	}
	step(time.Second, n+1) // WatchedInterval after the last relist began
	step(time.Second, n+1)

	mu.Lock()
	unwatched["c1"] = true // its watch ended: its exit would go unseen
	mu.Unlock()
	step(time.Second, n+2)
	step(time.Second, n+3)

	// A container that is not running needs no watch; the relist that
	// fetched the changed pod's status relists once more at the next
	// Interval, then the watch covers what it saw.
	rt.set(pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateExited), ctr("c2", runtime.ContainerStateExited)))
	step(time.Second, n+4)
	step(time.Second, n+5)
	step(time.Second, n+5)

	// A worker that stores a status after acting (it killed c2, which no
	// watch sees) has the next Interval relist.
	h.p.Cache().Set("u1", &runtime.PodStatus{ID: "u1"}, nil, h.clock.Now())
	step(time.Second, n+6)
	step(time.Second, n+6)
}

// Without the exit watch every Interval relists.
func TestPLEGRelistsEveryIntervalWithoutTheWatch(t *testing.T) {
	rt := &fakeRuntime{}
	h := startWith(t, Options{Runtime: rt, WatchedInterval: time.Hour})
	for range 3 {
		h.tick() // fails unless the Interval relists
	}
}

// Pods is what the last successful relist listed; a failed relist keeps it.
func TestPLEGPodsIsTheLastList(t *testing.T) {
	rt := &fakeRuntime{listErr: errors.New("runtime down")}
	h := start(t, rt)
	if _, ok := h.p.Pods(); ok {
		t.Fatal("Pods before any relist succeeded reports a list")
	}
	first := pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning))
	rt.mu.Lock()
	rt.listErr = nil
	rt.mu.Unlock()
	rt.set(first)
	h.tick()
	if got, ok := h.p.Pods(); !ok || len(got) != 1 || got[0].ID != "u1" {
		t.Fatalf("Pods() = %v, %v; want u1's, true", got, ok)
	}
	rt.mu.Lock()
	rt.listErr = errors.New("runtime down again")
	rt.mu.Unlock()
	rt.set()
	h.tick()
	if got, ok := h.p.Pods(); !ok || len(got) != 1 || got[0].ID != "u1" {
		t.Fatalf("Pods() after a failed relist = %v, %v; want the last list, u1's", got, ok)
	}
}
