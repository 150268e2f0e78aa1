package integration

import (
	"context"
	"testing"
	"time"

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
	go func() { done <- p.Start(ctx) }()
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
