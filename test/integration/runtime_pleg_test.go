package integration

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// TestRuntimePLEG relists the real runtime: starting a pod yields its
// events, and the cache then holds a status at least as new as the sync.
func TestRuntimePLEG(t *testing.T) {
	rt := newRuntime(t)
	p, err := pleg.New(pleg.Options{Runtime: rt, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()

	pod := busyboxPod("pleg", true, "sleep 300")
	killAtEnd(t, rt, pod)
	synced := time.Now()
	if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
		t.Fatal(err)
	}
	seen := map[pleg.EventType]bool{}
	timeout := time.After(30 * time.Second)
	for !seen[pleg.ContainerStarted] || !seen[pleg.PodSandboxChanged] {
		select {
		case e := <-p.Events():
			if e.ID == pod.UID {
				seen[e.Type] = true
			}
		case <-timeout:
			t.Fatalf("events seen for the pod: %v, want PodSandboxChanged and ContainerStarted", seen)
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	st, err := p.Cache().GetNewerThan(wctx, pod.UID, synced)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.LatestContainer("main"); c == nil || c.State != runtime.ContainerStateRunning {
		t.Errorf("cached status %s, want main running", describe(st))
	}
	if err := p.Healthy(); err != nil {
		t.Error(err)
	}
}

// TestRuntimePLEGExitWatch: with the exit watch on, a container's exit is
// noticed at once, though the next relist is an hour away; both for a
// container the sync started (watched from the status the worker stores)
// and for one found running by the first relist (an agent's restart).
func TestRuntimePLEGExitWatch(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Running before the PLEG starts: found by its first relist.
	before := busyboxPod("pleg-exit-before", false, "while [ ! -f /tmp/stop ]; do sleep 0.05; done; exit 4")
	killAtEnd(t, rt, before)
	if _, err := rt.SyncPod(ctx, before, nil, nil, runtime.SyncHooks{}); err != nil {
		t.Fatal(err)
	}

	p, err := pleg.New(pleg.Options{Runtime: rt, Interval: time.Hour, ContainerPID: rt.ContainerPID, Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 1})})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	pctx, pcancel := context.WithCancel(ctx)
	go func() { done <- p.Run(pctx) }()
	defer func() { pcancel(); <-done }()

	died := func(pod *corev1.Pod) time.Time {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case e := <-p.Events():
				if e.ID == pod.UID && e.Type == pleg.ContainerDied {
					return time.Now()
				}
			case <-timeout:
				t.Fatalf("pod %s: no ContainerDied within 30s, with the relist an hour away", pod.Name)
			}
		}
	}

	// Started by a sync while the PLEG runs; the worker's status (stored
	// in the cache, as the agent's syncer does) has it running.
	after := busyboxPod("pleg-exit-after", false, "sleep 0.5; exit 3")
	killAtEnd(t, rt, after)
	if _, err := rt.SyncPod(ctx, after, nil, nil, runtime.SyncHooks{}); err != nil {
		t.Fatal(err)
	}
	fetched := time.Now()
	st, err := rt.GetPodStatus(ctx, after.UID)
	if err != nil {
		t.Fatal(err)
	}
	p.Cache().Set(after.UID, st, nil, fetched)
	at := died(after)
	c := st.LatestContainer("main")
	if c == nil {
		t.Fatalf("status %s: no main container", describe(st))
	}
	t.Logf("the exit was seen %v after the container's start (it sleeps 500ms)", at.Sub(c.StartedAt).Round(time.Millisecond))

	stop, err := rt.ExecSync(ctx, runningMainID(t, ctx, rt, before.UID), []string{"touch", "/tmp/stop"}, 10*time.Second)
	if err != nil || stop.ExitCode != 0 {
		t.Fatalf("exec touch /tmp/stop: %v (exit %d)", err, stop.ExitCode)
	}
	died(before)
}

// runningMainID is the ID of the pod's running main container.
func runningMainID(t *testing.T, ctx context.Context, rt *runtime.Runtime, uid types.UID) string {
	t.Helper()
	st, err := rt.GetPodStatus(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	c := st.LatestContainer("main")
	if c == nil || c.State != runtime.ContainerStateRunning {
		t.Fatalf("status %s: main is not running", describe(st))
	}
	return c.ID
}
