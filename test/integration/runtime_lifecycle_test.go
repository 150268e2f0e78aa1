package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// TestRuntimeInitContainers: the init container runs to completion before
// the app container starts.
func TestRuntimeInitContainers(t *testing.T) {
	rt := newRuntime(t)
	pod := busyboxPod("init", false, "sleep 300")
	pod.Spec.InitContainers = []corev1.Container{busybox("setup", "sleep 1; echo set up")}
	killAtEnd(t, rt, pod)

	st := syncUntil(t, rt, pod, "main running", state("main", runtime.ContainerStateRunning))
	setup, main := st.LatestContainer("setup"), st.LatestContainer("main")
	if setup == nil || setup.State != runtime.ContainerStateExited || setup.ExitCode != 0 {
		t.Fatalf("init container: %s, want it exited 0", describe(st))
	}
	if !setup.FinishedAt.Before(main.StartedAt) && !setup.FinishedAt.Equal(main.StartedAt) {
		t.Errorf("init container finished at %s, after the app container started at %s", setup.FinishedAt, main.StartedAt)
	}
	if !setup.StartedAt.Before(setup.FinishedAt) {
		t.Errorf("init container started %s, finished %s", setup.StartedAt, setup.FinishedAt)
	}
}

// TestRuntimeSpecChange: a running container whose spec changed is
// replaced; its restart count goes on.
func TestRuntimeSpecChange(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	pod := busyboxPod("respec", true, "sleep 300")
	killAtEnd(t, rt, pod)
	if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
		t.Fatal(err)
	}
	before := podStatus(t, rt, pod.UID).LatestContainer("main")

	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
	res, err := rt.SyncPod(ctx, changed, nil, nil, runtime.SyncHooks{})
	if err != nil {
		t.Fatalf("SyncPod with the changed spec: %v (%+v)", err, res.Actions)
	}
	st := podStatus(t, rt, pod.UID)
	after := st.LatestContainer("main")
	if after.ID == before.ID || after.State != runtime.ContainerStateRunning || after.RestartCount != 1 {
		t.Fatalf("after the change: %s, want a new running instance with restart count 1", describe(st))
	}
	if after.Hash != runtime.HashContainer(&changed.Spec.Containers[0]) {
		t.Error("the new instance does not carry the new spec's hash")
	}
	for _, c := range st.Containers {
		if c.ID == before.ID && c.State != runtime.ContainerStateExited {
			t.Errorf("old instance is %s, want exited", c.State)
		}
	}
	if len(st.Sandboxes) != 1 {
		t.Errorf("%d sandboxes, want the same one", len(st.Sandboxes))
	}
}

// TestRuntimeCrashedContainer: a crashing container restarts under Always
// with a growing back-off, and stays dead under Never.
func TestRuntimeCrashedContainer(t *testing.T) {
	t.Run("Always restarts with back-off", func(t *testing.T) {
		ctx := context.Background()
		// A shorter back-off than the default 10 s keeps the test quick;
		// the doubling is the same.
		rt := newRuntime(t, func(o *runtime.Options) { o.BackoffInitial, o.BackoffMax = 2*time.Second, time.Minute })
		pod := busyboxPod("crash", true, "exit 3")
		killAtEnd(t, rt, pod)

		if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
			t.Fatal(err)
		}
		exitedN := func(n int) func(*runtime.PodStatus) bool {
			return func(st *runtime.PodStatus) bool {
				c := st.LatestContainer("main")
				return c != nil && c.RestartCount == n && c.State == runtime.ContainerStateExited
			}
		}
		st := waitStatus(t, rt, pod.UID, "first exit", exitedN(0))
		if c := st.LatestContainer("main"); c.ExitCode != 3 {
			t.Errorf("exit code %d, want 3", c.ExitCode)
		}
		// The first crash restarts at once.
		if _, err := rt.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{}); err != nil {
			t.Fatalf("restart after the first crash: %v", err)
		}
		st = waitStatus(t, rt, pod.UID, "second exit", exitedN(1))
		// The second waits out the back-off.
		for i, want := range []time.Duration{2 * time.Second, 4 * time.Second} {
			res, err := rt.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{})
			var berr *runtime.BackoffError
			if !errors.As(err, &berr) || berr.Delay != want || res.RetryAfter <= 0 || res.RetryAfter > want {
				t.Fatalf("crash %d: SyncPod = %v, RetryAfter %s; want a back-off of %s", i+2, err, res.RetryAfter, want)
			}
			if n := len(podStatus(t, rt, pod.UID).Containers); n != i+2 {
				t.Fatalf("crash %d: %d containers during the back-off, want %d", i+2, n, i+2)
			}
			time.Sleep(res.RetryAfter + 50*time.Millisecond)
			if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
				t.Fatalf("crash %d: SyncPod after the back-off: %v", i+2, err)
			}
			st = waitStatus(t, rt, pod.UID, "the next exit", exitedN(i+2))
		}
	})

	t.Run("Never leaves it dead", func(t *testing.T) {
		ctx := context.Background()
		rt := newRuntime(t)
		pod := busyboxPod("crash-never", false, "exit 3")
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		killAtEnd(t, rt, pod)
		if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, rt, pod.UID, "exit", state("main", runtime.ContainerStateExited))
		res, err := rt.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{})
		if err != nil || !res.Terminal {
			t.Fatalf("SyncPod after the exit: %+v, %v; want terminal", res, err)
		}
		st = podStatus(t, rt, pod.UID)
		if len(st.Containers) != 1 || st.Sandboxes[0].State != runtime.SandboxNotReady {
			t.Errorf("after the terminal sync: %s, want one exited container and a stopped sandbox", describe(st))
		}
		if res, err := rt.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{}); err != nil || !res.Terminal || len(podStatus(t, rt, pod.UID).Containers) != 1 {
			t.Errorf("another sync: %+v, %v; want terminal, nothing new", res, err)
		}
	})
}

// TestRuntimeKillPodGracePeriod: a container that traps TERM exits through
// its trap within a grace period of 2 s, and never sees TERM with 0.
func TestRuntimeKillPodGracePeriod(t *testing.T) {
	const script = `trap 'echo got TERM; exit 0' TERM; echo ready; while true; do sleep 0.1; done`
	for _, tc := range []struct {
		name     string
		grace    int64
		wantTERM bool
	}{{"grace 2", 2, true}, {"grace 0", 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rt := newRuntime(t)
			pod := busyboxPod("kill", true, script)
			killAtEnd(t, rt, pod)
			if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
				t.Fatal(err)
			}
			logPath := rt.PodLogDir(pod) + "/main/0.log"
			waitFile(t, logPath, "ready")

			start := time.Now()
			if err := rt.KillPod(ctx, pod, runtime.Pod{ID: pod.UID}, &tc.grace); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			t.Logf("KillPod with grace %d took %s", tc.grace, time.Since(start).Round(time.Millisecond))
			logText := waitFile(t, logPath, "ready")
			if got := strings.Contains(logText, "got TERM"); got != tc.wantTERM {
				t.Errorf("container saw TERM: %v, want %v (log %q)", got, tc.wantTERM, logText)
			}
			if st := podStatus(t, rt, pod.UID); len(st.Containers)+len(st.Sandboxes) > 0 {
				t.Errorf("after KillPod: %s", describe(st))
			}
		})
	}
}

// TestRuntimeAdoption: a new Runtime (a restarted agent) finds the pod
// another one created, and syncing it with the same spec changes nothing.
func TestRuntimeAdoption(t *testing.T) {
	ctx := context.Background()
	pod := busyboxPod("adopt", false, "sleep 300")
	pod.Spec.InitContainers = []corev1.Container{busybox("setup", "true")}
	killAtEnd(t, newRuntime(t), pod)

	first := newRuntime(t)
	st := syncUntil(t, first, pod, "main running", state("main", runtime.ContainerStateRunning))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range st.Containers {
		ids[c.ID] = true
	}

	second := newRuntime(t)
	pods, err := second.GetPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found *runtime.Pod
	for _, p := range pods {
		if p.ID == pod.UID {
			found = p
		}
	}
	if found == nil || found.Name != "adopt" || found.Namespace != "default" || len(found.Containers) != 2 || len(found.Sandboxes) != 1 {
		t.Fatalf("GetPods of the new runtime: %+v, want the pod with its sandbox and 2 containers", found)
	}

	st = podStatus(t, second, pod.UID)
	res, err := second.SyncPod(ctx, pod, nil, st, runtime.SyncHooks{})
	if err != nil || len(res.Actions) != 0 {
		t.Fatalf("SyncPod of the adopted pod: actions %+v, err %v; want none", res.Actions, err)
	}
	after := podStatus(t, second, pod.UID)
	if len(after.Containers) != len(ids) {
		t.Errorf("containers after the sync: %s, want the same %d", describe(after), len(ids))
	}
	for _, c := range after.Containers {
		if !ids[c.ID] {
			t.Errorf("new container %s (%s) after syncing an adopted pod", c.ID, c.Name)
		}
	}
	if main := after.LatestContainer("main"); main.State != runtime.ContainerStateRunning || main.RestartCount != 0 {
		t.Errorf("main after adoption: %+v, want running, never restarted", main)
	}
}

// TestRuntimePreStopBeforeReplace: a container replaced because its spec
// changed runs its preStop hook first (here an exec of 1.5 s in it, as the
// agent's hook does), and is stopped only after the hook, with what is left
// of the pod's grace period. (A static pod's changed manifest is a new
// pod, so the agent's own path is an apiserver pod's spec change.)
func TestRuntimePreStopBeforeReplace(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	pod := busyboxPod("prestop", true, "trap 'exit 0' TERM; while true; do sleep 0.2; done")
	grace := int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	killAtEnd(t, rt, pod)
	if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
		t.Fatal(err)
	}
	before := podStatus(t, rt, pod.UID).LatestContainer("main")

	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
	changed.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "1.5"}}}}
	var hookEnd time.Time
	var hookGrace, left int64
	hooks := runtime.SyncHooks{PreStop: func(ctx context.Context, c *corev1.Container, id string, _ []string, g int64) int64 {
		began := time.Now()
		hookGrace = g
		res, err := rt.ExecSync(ctx, id, c.Lifecycle.PreStop.Exec.Command, time.Duration(g)*time.Second)
		if err != nil || res.ExitCode != 0 || id != before.ID {
			t.Errorf("preStop in %s (want %s): %+v, %v", id, before.ID, res, err)
		}
		hookEnd = time.Now()
		left = g - int64(hookEnd.Sub(began).Seconds()+0.999)
		return left
	}}
	if _, err := rt.SyncPod(ctx, changed, nil, nil, hooks); err != nil {
		t.Fatal(err)
	}
	var old *runtime.ContainerStatus
	for _, c := range podStatus(t, rt, pod.UID).Containers {
		if c.ID == before.ID {
			old = &c
		}
	}
	if hookEnd.IsZero() || old == nil {
		t.Fatalf("preStop ran: %v; old instance: %+v", !hookEnd.IsZero(), old)
	}
	t.Logf("preStop given %d s, left %d s; the old instance ended %v after the hook", hookGrace, left, old.FinishedAt.Sub(hookEnd).Round(time.Millisecond))
	if hookGrace != 5 || old.State != runtime.ContainerStateExited || old.FinishedAt.Before(hookEnd.Add(-100*time.Millisecond)) {
		t.Errorf("hook given %d s (want 5); old instance %s, finished %v, hook ended %v: want it stopped after the hook",
			hookGrace, old.State, old.FinishedAt, hookEnd)
	}
}
