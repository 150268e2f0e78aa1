package podworkers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// env runs real PodWorkers against a holdingSyncer and a fake clock. After
// every action it waits until the workers have settled: each busy worker is
// held inside a Syncer call and every other worker is idle. What happens in
// between is then fixed by the state machine alone, not by scheduling.
type env struct {
	t       testing.TB
	pw      *PodWorkers
	syncer  *holdingSyncer
	metrics *recordingMetrics
	clock   *clocktesting.FakeClock
	start   time.Time

	jitterMu sync.Mutex
	jitterR  float64 // the fraction of the largest jitter used

	pods     map[types.UID]*corev1.Pod // the newest spec given per pod
	versions map[types.UID]int
	chans    map[string]chan struct{} // Completed channels by name
	script   map[types.UID][]callResult

	stop    context.CancelFunc
	stopped chan struct{}
}

func newEnv(t testing.TB) *env {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &env{
		t: t, syncer: newHoldingSyncer(), metrics: &recordingMetrics{},
		clock: clocktesting.NewFakeClock(start), start: start, jitterR: 0.5,
		pods: map[types.UID]*corev1.Pod{}, versions: map[types.UID]int{},
		chans: map[string]chan struct{}{}, script: map[types.UID][]callResult{},
		stopped: make(chan struct{}),
	}
	pw, err := New(Options{Syncer: e.syncer, Clock: e.clock, Jitter: e.jitter, Metrics: e.metrics})
	if err != nil {
		t.Fatal(err)
	}
	e.pw = pw
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	go func() {
		defer close(e.stopped)
		if err := pw.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(e.close)
	return e
}

// close ends Run and waits for every worker goroutine.
func (e *env) close() {
	e.stop()
	<-e.stopped
}

func (e *env) jitter(d time.Duration) time.Duration {
	e.jitterMu.Lock()
	defer e.jitterMu.Unlock()
	return d + time.Duration(float64(d)*DefaultJitterFactor*e.jitterR)
}

// settle waits until every busy worker is held in a Syncer call. The wait
// is bounded only to turn a deadlock into a failure; nothing is timed.
func (e *env) settle() {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !e.settled() {
		if time.Now().After(deadline) {
			e.t.Fatalf("pod workers did not settle; log so far: %q", e.syncer.take())
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func (e *env) settled() bool {
	p := e.pw
	p.mu.Lock()
	defer p.mu.Unlock()
	held := 0
	for uid, w := range p.workers {
		if w.working && e.syncer.heldLive(uid) {
			held++
		}
	}
	return held == p.working
}

// pod builds the next version of a pod from args, leaving the earlier
// version untouched: a worker may still be reading it.
func (e *env) pod(a args) (*corev1.Pod, error) {
	uid := types.UID(a.get("uid", ""))
	if uid == "" {
		return nil, errors.New("uid= is required")
	}
	pod := &corev1.Pod{}
	if old := e.pods[uid]; old != nil {
		pod = old.DeepCopy()
	} else {
		pod.UID, pod.Namespace, pod.Name = uid, "default", "pod-"+string(uid)
		pod.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource)}
	}
	pod.Name = a.get("name", pod.Name)
	pod.Namespace = a.get("ns", pod.Namespace)
	if a.has("static") {
		pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
	}
	if g, ok := a.int("grace"); ok {
		pod.Spec.TerminationGracePeriodSeconds = &g
	}
	if g, ok := a.int("deleting"); ok {
		now := metav1.NewTime(e.clock.Now())
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, &g
	}
	if ph := a.get("phase", ""); ph != "" {
		pod.Status.Phase = corev1.PodPhase(ph)
	}
	e.versions[uid]++
	pod.ResourceVersion = strconv.Itoa(e.versions[uid])
	e.pods[uid] = pod
	return pod, nil
}

func (e *env) killOptions(a args) *KillPodOptions {
	k := &KillPodOptions{Evict: a.has("evict"), MayBeRunning: a.has("maybe-running")}
	if g, ok := a.int("grace"); ok {
		k.GracePeriodOverride = &g
	}
	if r := a.get("reason", ""); r != "" {
		k.StatusFunc = func(st *corev1.PodStatus) { st.Reason = r }
	}
	if name := a.get("done", ""); name != "" {
		ch := make(chan struct{})
		e.chans[name] = ch
		k.Completed = ch
	}
	return k
}

// result parses err= and terminal into a call result.
func result(a args) callResult {
	r := callResult{terminal: a.has("terminal")}
	switch msg := a.get("err", ""); msg {
	case "":
	case "network":
		r.err = fmt.Errorf("cni plugin not initialized: %w", ErrNetworkNotReady)
	default:
		r.err = errors.New(msg)
	}
	return r
}

// nextResult pops the scripted result for uid's next call, or ok.
func (e *env) nextResult(uid types.UID) callResult {
	q := e.script[uid]
	if len(q) == 0 {
		return callResult{}
	}
	e.script[uid] = q[1:]
	return q[0]
}

// since formats t relative to the start of the test.
func (e *env) since(t time.Time) string {
	return "+" + t.Sub(e.start).String()
}
