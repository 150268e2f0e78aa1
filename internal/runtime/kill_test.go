package runtime

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestKillPod(t *testing.T) {
	for _, tc := range []struct {
		name      string
		withSpec  bool
		override  *int64
		wantGrace int64
	}{
		{name: "the pod's grace period", withSpec: true, wantGrace: 5},
		{name: "an override wins", withSpec: true, override: ptr(int64(0)), wantGrace: 0},
		{name: "no spec: the grace period from the annotations", withSpec: false, wantGrace: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			pod := newPod(withApp("side"))
			w.mustSync(pod)
			cgroups := w.makeCgroups("u1")
			w.calls()

			var spec *corev1.Pod
			if tc.withSpec {
				spec = pod
			}
			if err := w.rt.KillPod(context.Background(), spec, Pod{ID: "u1"}, tc.override); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			want := []string{"StopContainer", "StopContainer", "StopPodSandbox", "RemoveContainer", "RemoveContainer", "RemovePodSandbox"}
			if got := w.calls(); !cmp.Equal(got, want) {
				t.Errorf("calls = %v, want %v", got, want)
			}
			for id, g := range w.cri.stops {
				if g != tc.wantGrace {
					t.Errorf("container %s stopped with timeout %d, want %d", id, g, tc.wantGrace)
				}
			}
			if n, m := len(w.cri.Sandboxes), len(w.cri.Containers); n+m != 0 {
				t.Errorf("%d sandboxes and %d containers left", n, m)
			}
			for _, d := range cgroups {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("cgroup %s left behind (%v)", d, err)
				}
			}
		})
	}
}

// StopPod stops the containers, then the sandbox, and removes nothing;
// KillPod later finishes the job.
func TestStopPodLeavesRemovalToKillPod(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withApp("side"))
	w.mustSync(pod)
	cgroups := w.makeCgroups("u1")
	w.calls()

	if err := w.rt.StopPod(context.Background(), pod, Pod{ID: "u1"}, ptr(int64(3)), nil); err != nil {
		t.Fatalf("StopPod: %v", err)
	}
	if got, want := w.calls(), []string{"StopContainer", "StopContainer", "StopPodSandbox"}; !cmp.Equal(got, want) {
		t.Errorf("StopPod calls = %v, want %v", got, want)
	}
	for id, g := range w.cri.stops {
		if g != 3 {
			t.Errorf("container %s stopped with timeout %d, want 3", id, g)
		}
	}
	st, err := w.rt.GetPodStatus(context.Background(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.RunningContainers()) != 0 || len(st.Containers) != 2 || len(st.Sandboxes) != 1 || st.Sandboxes[0].State != SandboxNotReady {
		t.Errorf("after StopPod: %d containers (%d running), sandboxes %+v; want both kept but stopped and the sandbox not ready",
			len(st.Containers), len(st.RunningContainers()), st.Sandboxes)
	}
	for _, d := range cgroups {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("cgroup %s removed by StopPod: %v", d, err)
		}
	}

	if err := w.rt.KillPod(context.Background(), pod, Pod{ID: "u1"}, ptr(int64(0))); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if got, want := w.calls(), []string{"StopPodSandbox", "RemoveContainer", "RemoveContainer", "RemovePodSandbox"}; !cmp.Equal(got, want) {
		t.Errorf("KillPod after StopPod: calls = %v, want %v", got, want)
	}
	if n, m := len(w.cri.Sandboxes), len(w.cri.Containers); n+m != 0 {
		t.Errorf("%d sandboxes and %d containers left", n, m)
	}
}

// TestKillPodStopsContainersInParallel holds every StopContainer until all
// of the pod's containers are being stopped: a serial kill would time out.
func TestKillPodStopsContainersInParallel(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withApp("b"), withApp("c"))
	w.mustSync(pod)

	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	w.cri.stopGate = func(string) error {
		mu.Lock()
		arrived++
		if arrived == 3 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the other containers were not stopped meanwhile")
		}
	}
	if err := w.rt.KillPod(context.Background(), pod, Pod{ID: pod.UID}, nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
}

func TestKillPodReportsFailures(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	w.cri.InjectError("StopPodSandbox", errors.New("network teardown failed"))
	err := w.rt.KillPod(context.Background(), pod, Pod{ID: pod.UID}, nil)
	if !errors.Is(err, ErrKillPod) {
		t.Fatalf("KillPod error = %v, want ErrKillPod", err)
	}
	if len(w.cri.Sandboxes) != 1 {
		t.Error("the sandbox was removed although it did not stop")
	}
	// The next attempt finishes the job.
	if err := w.rt.KillPod(context.Background(), pod, Pod{ID: pod.UID}, nil); err != nil {
		t.Fatalf("second KillPod: %v", err)
	}
}

func TestKillPodForgetsBackoff(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	w.exit(w.containerID("u1", "app"), 1, time.Second)
	w.mustSync(pod)
	w.clock.Step(time.Second)
	w.exit(w.containerID("u1", "app"), 1, time.Second)
	if _, err := w.sync(pod, nil); !errors.Is(err, ErrCrashLoopBackOff) {
		t.Fatalf("want a back-off before the kill, got %v", err)
	}
	if err := w.rt.KillPod(context.Background(), pod, Pod{ID: pod.UID}, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(w.rt.backoff.entries); n != 0 {
		t.Errorf("%d back-off entries left after the kill", n)
	}
}

// TestStopPodStopsSidecarsLast: the app containers stop first, in
// parallel, with the grace period; then the sidecars, last declared
// first, each with the whole seconds left of it, its preStop hook right
// before its stop.
func TestStopPodStopsSidecarsLast(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withSidecar("s0"), withSidecar("s1"), withApp("b"), func(p *corev1.Pod) {
		p.Spec.InitContainers[1].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
	})
	for range 3 { // s0, then s1, then the app containers
		w.mustSync(pod)
	}
	names := map[string]string{}
	for _, n := range []string{"s0", "s1", "app", "b"} {
		id := w.containerID("u1", n)
		if id == "" {
			t.Fatalf("container %s not started", n)
		}
		names[id] = n
	}

	var mu sync.Mutex
	var order []string
	w.cri.stopGate = func(id string) error {
		mu.Lock()
		order = append(order, names[id])
		mu.Unlock()
		switch names[id] {
		case "b": // the app containers take 1.5 s to stop
			w.clock.Step(1500 * time.Millisecond)
		case "s1":
			w.clock.Step(time.Second)
		}
		return nil
	}
	preStop := func(_ context.Context, c *corev1.Container, id string, _ []string, grace int64) int64 {
		mu.Lock()
		order = append(order, "preStop "+c.Name)
		mu.Unlock()
		if grace != 3 {
			t.Errorf("preStop of %s given %d s, want the 3 s left", c.Name, grace)
		}
		w.clock.Step(time.Second)
		return 2
	}
	if err := w.rt.StopPod(context.Background(), pod, Pod{ID: pod.UID}, nil, preStop); err != nil {
		t.Fatalf("StopPod: %v", err)
	}
	if len(order) != 5 || !cmp.Equal(order[2:], []string{"preStop s1", "s1", "s0"}) {
		t.Errorf("stop order = %v, want app and b (either order), then s1's preStop, s1, then s0", order)
	}
	want := map[string]int64{"app": 5, "b": 5, "s1": 2, "s0": 1}
	for id, n := range names {
		if got := w.cri.stops[id]; got != want[n] {
			t.Errorf("%s stopped with timeout %d, want %d", n, got, want[n])
		}
	}
}
