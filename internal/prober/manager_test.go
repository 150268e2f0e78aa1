package prober

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeExec answers each exec with the next exit code scripted for the
// container (0 once the script ends) and tells the test of each call.
type fakeExec struct {
	mu     sync.Mutex
	script map[string][]int
	calls  chan string
}

func (f *fakeExec) ExecSync(_ context.Context, id string, _ []string, _ time.Duration) (runtime.ExecResult, error) {
	f.mu.Lock()
	code := 0
	if s := f.script[id]; len(s) > 0 {
		code, f.script[id] = s[0], s[1:]
	}
	f.mu.Unlock()
	f.calls <- id
	if code < 0 {
		return runtime.ExecResult{}, errors.New("exec failed")
	}
	return runtime.ExecResult{ExitCode: code, Stdout: []byte("out")}, nil
}

type env struct {
	t     *testing.T
	m     *Manager
	exec  *fakeExec
	clock *testingclock.FakeClock
	stop  func()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, exec: &fakeExec{script: map[string][]int{}, calls: make(chan string, 100)}, clock: testingclock.NewFakeClock(time.Unix(1000, 0))}
	m, err := New(Options{Exec: e.exec, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	e.stop = func() { cancel(); <-done }
	t.Cleanup(e.stop)
	// Sync before Run has taken its context starts nothing: wait for it.
	for {
		m.mu.Lock()
		ready := m.ctx != nil
		m.mu.Unlock()
		if ready {
			return e
		}
		time.Sleep(time.Millisecond)
	}
}

// tick moves the clock by d once waiters workers wait on it, and returns
// the container IDs probed as a result (want of them).
func (e *env) tick(d time.Duration, want, waiters int) []string {
	e.t.Helper()
	e.waitFor(waiters)
	e.clock.Step(d)
	return e.probes(want)
}

func (e *env) waitFor(waiters int) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.clock.Waiters() < waiters {
		if time.Now().After(deadline) {
			e.t.Fatal("no worker waits on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

// probes returns the container IDs probed next (want of them).
func (e *env) probes(want int) []string {
	e.t.Helper()
	var got []string
	for range want {
		select {
		case id := <-e.exec.calls:
			got = append(got, id)
		case <-time.After(5 * time.Second):
			e.t.Fatalf("probed %v, want %d probes", got, want)
		}
	}
	return got
}

func (e *env) update() Update {
	e.t.Helper()
	select {
	case u := <-e.m.Updates():
		return u
	case <-time.After(5 * time.Second):
		e.t.Fatal("no update")
	}
	return Update{}
}

func (e *env) noUpdate() {
	e.t.Helper()
	select {
	case u := <-e.m.Updates():
		e.t.Fatalf("unexpected update %+v", u)
	case <-time.After(20 * time.Millisecond):
	}
}

func execProbe(period, success, failure int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: period, TimeoutSeconds: 1, SuccessThreshold: success, FailureThreshold: failure,
	}
}

func probedPod(c corev1.Container) *corev1.Pod {
	c.Name, c.Image = "app", "busybox"
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-1")},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, TerminationGracePeriodSeconds: new(int64(30))},
	}
}

func running(pod *corev1.Pod, id string, started time.Time) *runtime.PodStatus {
	return &runtime.PodStatus{ID: pod.UID, IPs: []string{"10.0.0.2"}, Containers: []runtime.ContainerStatus{
		{ID: id, Name: "app", State: runtime.ContainerStateRunning, StartedAt: started},
	}}
}

func (e *env) noProbe() {
	e.t.Helper()
	select {
	case id := <-e.exec.calls:
		e.t.Fatalf("unexpected probe of %s", id)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestReadinessFollowsThresholdsBothWays(t *testing.T) {
	e := newEnv(t)
	pod := probedPod(corev1.Container{ReadinessProbe: execProbe(1, 2, 2)})
	e.exec.script["c1"] = []int{0, 0, 1, 0, 1, 1}
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))

	e.probes(1) // at once: success 1 of 2, not ready yet
	e.noUpdate()
	if e.m.Ready("c1") {
		t.Fatal("ready after one success of two")
	}
	e.tick(time.Second, 1, 1)
	if u := e.update(); u.Kind != Readiness || u.Result != Success || u.ContainerID != "c1" || u.PodUID != pod.UID {
		t.Fatalf("update = %+v", u)
	}
	if !e.m.Ready("c1") {
		t.Fatal("not ready after two successes")
	}
	e.tick(time.Second, 1, 1) // one failure, then a success: the streak breaks
	e.tick(time.Second, 1, 1)
	e.noUpdate()
	e.tick(time.Second, 1, 1)
	e.tick(time.Second, 1, 1)
	if u := e.update(); u.Result != Failure || u.Message == "" {
		t.Fatalf("update = %+v, want a failure saying why", u)
	}
	if e.m.Ready("c1") {
		t.Fatal("ready after two failures")
	}
	if k := e.m.Unhealthy(pod.UID); len(k) != 0 {
		t.Fatalf("a readiness failure kills: %+v", k)
	}
}

func TestInitialDelayAndPeriod(t *testing.T) {
	e := newEnv(t)
	p := execProbe(5, 1, 1)
	p.InitialDelaySeconds = 3
	pod := probedPod(corev1.Container{ReadinessProbe: p})
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))
	e.waitFor(1)
	e.clock.Step(2 * time.Second)
	e.noProbe()
	e.tick(time.Second, 1, 1) // 3 s after the start
	e.update()
	e.waitFor(1)
	e.clock.Step(4 * time.Second)
	e.noProbe()
	e.tick(time.Second, 1, 1)
}

// A readiness probe held back by a startup probe runs as soon as the
// startup probe passes, not a readiness period later.
func TestReadinessRunsWhenStartupPasses(t *testing.T) {
	e := newEnv(t)
	pod := probedPod(corev1.Container{StartupProbe: execProbe(1, 1, 3), ReadinessProbe: execProbe(30, 1, 1)})
	e.exec.script["c1"] = []int{1} // the first startup probe fails, later ones pass
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))
	e.probes(1)
	e.tick(time.Second, 1, 2) // the startup probe passes, 29 s before the readiness period ends
	if got := e.probes(1); got[0] != "c1" {
		t.Fatalf("probed %v", got)
	}
	kinds := map[Kind]Result{}
	for range 2 {
		u := e.update()
		kinds[u.Kind] = u.Result
	}
	if kinds[Startup] != Success || kinds[Readiness] != Success || !e.m.Ready("c1") {
		t.Fatalf("updates %v, ready %v: want startup and readiness passed", kinds, e.m.Ready("c1"))
	}
}

func TestStartupHoldsBackLivenessThenKillsWithItsGrace(t *testing.T) {
	e := newEnv(t)
	startup := execProbe(1, 1, 2)
	startup.TerminationGracePeriodSeconds = new(int64(4))
	pod := probedPod(corev1.Container{StartupProbe: startup, LivenessProbe: execProbe(1, 1, 1)})
	e.exec.script["c1"] = []int{1, 1}
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))

	// Only the startup probe runs while it has not succeeded.
	e.probes(1)
	e.tick(time.Second, 1, 2)
	e.noProbe()
	u := e.update()
	if u.Kind != Startup || u.Result != Failure {
		t.Fatalf("update = %+v", u)
	}
	kills := e.m.Unhealthy(pod.UID)
	if len(kills) != 1 || kills[0].ContainerID != "c1" || kills[0].Grace != 4 {
		t.Fatalf("Unhealthy = %+v, want c1 with the probe's grace 4", kills)
	}
	if why := e.m.KillReason("c1"); why == "" {
		t.Fatal("no kill reason for c1")
	}
	// The replacement starts afresh: startup succeeds, then liveness runs.
	e.m.Sync(pod, running(pod, "c2", e.clock.Now()))
	if k := e.m.Unhealthy(pod.UID); len(k) != 0 {
		t.Fatalf("Unhealthy after the restart = %+v", k)
	}
	if got := e.probes(1); got[0] != "c2" {
		t.Fatalf("probed %v", got)
	}
	if u := e.update(); u.Kind != Startup || u.Result != Success || u.ContainerID != "c2" {
		t.Fatalf("update = %+v", u)
	}
	if !e.m.Started("c2") {
		t.Fatal("c2 not started")
	}
	// From now on the liveness probe (succeeding: no update) runs alone;
	// it may have run once already, as soon as the startup probe passed.
	time.Sleep(20 * time.Millisecond)
	for len(e.exec.calls) > 0 {
		<-e.exec.calls
	}
	for range 2 {
		e.tick(time.Second, 1, 2)
		e.noProbe()
	}
	e.noUpdate()
	if e.m.KillReason("c1") == "" {
		t.Fatal("the kill reason of c1 is gone before its pod")
	}
	e.m.Forget(pod.UID)
	if e.m.KillReason("c1") != "" {
		t.Fatal("Forget kept the kill reason")
	}
}

func TestLivenessFailureHoldsUntilReplaced(t *testing.T) {
	e := newEnv(t)
	pod := probedPod(corev1.Container{LivenessProbe: execProbe(1, 1, 1)})
	e.exec.script["c1"] = []int{-1}
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))
	e.probes(1)
	if u := e.update(); u.Kind != Liveness || u.Result != Failure {
		t.Fatalf("update = %+v", u)
	}
	k := e.m.Unhealthy(pod.UID)
	if len(k) != 1 || k[0].Grace != 30 {
		t.Fatalf("Unhealthy = %+v, want c1 with the pod's grace 30", k)
	}
	// On hold: no more probes of c1.
	e.tick(5*time.Second, 0, 1)
	e.noProbe()
	// The container is gone: its worker ends (goleak checks the end).
	e.m.Sync(pod, &runtime.PodStatus{ID: pod.UID})
	e.m.mu.Lock()
	n := len(e.m.workers)
	e.m.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d pods still have workers", n)
	}
}

// An HTTP probe that stops at a redirect to another host succeeds, and
// says so once as a warning, not at every period.
func TestRedirectAwayWarnsOnce(t *testing.T) {
	hits := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- struct{}{}
		http.Redirect(w, r, "http://0.0.0.0/", http.StatusFound)
	}))
	defer srv.Close()
	e := newEnv(t)
	p := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(serverPort(t, srv)))}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	pod := probedPod(corev1.Container{LivenessProbe: p})
	e.m.Sync(pod, running(pod, "c1", e.clock.Now()))

	hit := func() {
		t.Helper()
		select {
		case <-hits:
		case <-time.After(5 * time.Second):
			t.Fatal("the probe did not reach the server")
		}
	}
	hit()
	if u := e.update(); !u.Warning || u.Result != Success || !strings.Contains(u.Message, "Probe terminated redirects") {
		t.Fatalf("first update %+v, want a warning of the terminated redirect", u)
	}
	e.noUpdate() // a liveness probe starts out successful: no change
	e.waitFor(1)
	e.clock.Step(time.Second)
	hit()
	e.noUpdate()
}
