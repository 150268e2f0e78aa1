package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func withPostStart(names ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, n := range names {
			c := container(p, n)
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		}
	}
}

// TestSyncPodRunsPostStartBeforeTheNextStart: a container's postStart hook
// runs right after its start, before the next container of the same sync
// is created, with the new sandbox's address.
func TestSyncPodRunsPostStartBeforeTheNextStart(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withApp("b"), withApp("c"), withPostStart("app", "b"))
	var story []string
	w.hooks.PostStart = func(_ context.Context, c *corev1.Container, id string, ips []string) error {
		story = append(story, w.calls()...)
		story = append(story, "postStart "+c.Name)
		if len(ips) == 0 {
			t.Errorf("postStart of %s: no pod IP", c.Name)
		}
		return nil
	}
	w.mustSync(pod)
	story = append(story, w.calls()...)
	want := []string{
		"RunPodSandbox", "CreateContainer", "StartContainer", "postStart app",
		"CreateContainer", "StartContainer", "postStart b",
		"CreateContainer", "StartContainer",
	}
	if diff := cmp.Diff(want, story); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestSyncPodStopsStartsAfterAFailedInitHook: an init container whose
// postStart failed holds back what the sync would start after it.
func TestSyncPodStopsStartsAfterAFailedInitHook(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withSidecar("s0"), withInit("i1"), withPostStart("s0"))
	w.mustSync(pod) // s0
	w.mustSync(pod) // i1
	w.exit(w.containerID("u1", "i1"), 0, 0)
	w.exit(w.containerID("u1", "s0"), 1, 0)
	// Now s0 restarts and the app would follow in the same sync.
	hookErr := errors.New("hook failed")
	hooked := 0
	w.hooks.PostStart = func(context.Context, *corev1.Container, string, []string) error {
		hooked++
		return hookErr
	}
	res := w.mustSync(pod)
	var started []string
	for _, a := range res.Actions {
		if a.Kind == ActionStartContainer {
			started = append(started, a.Container)
		}
	}
	if hooked != 1 || !cmp.Equal(started, []string{"s0"}) {
		t.Errorf("hooks run %d, started %v; want one hook and only s0 started", hooked, started)
	}
}

// TestSyncPodCancelledStartsNothingMore: a kill cancels the sync between
// two starts; the rest is not started.
func TestSyncPodCancelledStartsNothingMore(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withApp("b"), withPostStart("app"))
	ctx, cancel := context.WithCancel(context.Background())
	w.hooks.PostStart = func(context.Context, *corev1.Container, string, []string) error {
		cancel()
		return context.Canceled
	}
	st, err := w.rt.GetPodStatus(ctx, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.rt.SyncPod(ctx, pod, nil, st, w.hooks)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("SyncPod = %v, want context.Canceled", err)
	}
	if s, _ := w.rt.GetPodStatus(context.Background(), pod.UID); s.LatestContainer("b") != nil {
		t.Error("b was created after the sync was cancelled")
	}
}

// TestSyncPodRunsPreStopBeforeReplacing: a container replaced because its
// spec changed runs its preStop hook first, and the stop gets what is left
// of the grace period.
func TestSyncPodRunsPreStopBeforeReplacing(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	old := w.containerID("u1", "app")
	changed := newPod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = "busybox:2"
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3}}}
	})
	w.calls()
	var story []string
	w.hooks.PreStop = func(_ context.Context, c *corev1.Container, id string, ips []string, grace int64) int64 {
		story = append(story, w.calls()...)
		story = append(story, "preStop "+c.Name)
		if id != old || grace != 5 || len(ips) == 0 {
			t.Errorf("preStop of %s (%s) with grace %d and IPs %v; want %s, 5 and the pod's IP", c.Name, id, grace, ips, old)
		}
		return 2
	}
	w.mustSync(changed)
	story = append(story, w.calls()...)
	if want := []string{"preStop app", "StopContainer", "CreateContainer", "StartContainer"}; !cmp.Equal(story, want) {
		t.Errorf("calls = %v, want %v", story, want)
	}
	if got := w.cri.stops[old]; got != 2 {
		t.Errorf("the replaced container stopped with timeout %d, want the 2 s the hook left", got)
	}
}

// TestSyncPodStopsSidecarsOfAFinishedPod: once the app containers of a
// pod that does not restart them have ended, its sidecars stop, last
// declared first, each after its preStop hook.
func TestSyncPodStopsSidecarsOfAFinishedPod(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withPolicy(corev1.RestartPolicyNever), withSidecar("s0"), withSidecar("s1"), func(p *corev1.Pod) {
		for i := range p.Spec.InitContainers {
			p.Spec.InitContainers[i].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
		}
	})
	for range 3 { // s0, s1, app
		w.mustSync(pod)
	}
	w.exit(w.containerID("u1", "app"), 0, time.Second)
	var story []string
	w.hooks.PreStop = func(_ context.Context, c *corev1.Container, _ string, _ []string, grace int64) int64 {
		story = append(story, w.calls()...)
		story = append(story, "preStop "+c.Name)
		return grace
	}
	w.calls()
	res := w.mustSync(pod)
	story = append(story, w.calls()...)
	want := []string{"preStop s1", "StopContainer", "preStop s0", "StopContainer", "StopPodSandbox"}
	if !res.Terminal || !cmp.Equal(story, want) {
		t.Errorf("terminal %v, calls %v; want terminal and %v", res.Terminal, story, want)
	}
}

// TestSyncPodRunsPreStopBeforeALostSandboxsStop: a sync that stops the pod
// because its sandbox is lost runs the running containers' preStop hooks
// before their stop, within the pod's grace period.
func TestSyncPodRunsPreStopBeforeALostSandboxsStop(t *testing.T) {
	w := newWorld(t)
	pod := newPod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
	})
	w.mustSync(pod)
	old := w.containerID("u1", "app")
	w.cri.Lock()
	for _, sb := range w.cri.Sandboxes {
		sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	}
	w.cri.Unlock()
	var story []string
	w.hooks.PreStop = func(_ context.Context, c *corev1.Container, id string, _ []string, grace int64) int64 {
		story = append(story, w.calls()...)
		story = append(story, "preStop "+c.Name)
		if id != old || grace != 5 {
			t.Errorf("preStop of %s (%s) with grace %d, want %s and 5", c.Name, id, grace, old)
		}
		return 4
	}
	w.calls()
	w.mustSync(pod)
	story = append(story, w.calls()...)
	if want := []string{"preStop app", "StopContainer", "StopPodSandbox", "RunPodSandbox", "CreateContainer", "StartContainer"}; !cmp.Equal(story, want) {
		t.Errorf("calls = %v, want %v", story, want)
	}
	if got := w.cri.stops[old]; got != 4 {
		t.Errorf("the container stopped with timeout %d, want the 4 s the hook left", got)
	}
}
