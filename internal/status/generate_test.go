package status

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

var (
	t0  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now = t0.Add(time.Minute)
)

func testPod(policy corev1.RestartPolicy, inits []string, apps ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec:       corev1.PodSpec{RestartPolicy: policy},
	}
	for _, n := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: n, Image: "busybox"})
	}
	for _, n := range apps {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: "busybox"})
	}
	return pod
}

func readySandbox() []runtime.SandboxStatus {
	return []runtime.SandboxStatus{{ID: "sb1", State: runtime.SandboxReady, IP: "10.1.0.5"}}
}

func running(name, id string) runtime.ContainerStatus {
	return runtime.ContainerStatus{ID: id, Name: name, State: runtime.ContainerStateRunning, StartedAt: t0, Image: "busybox:latest", ImageRef: "sha256:abc"}
}

func exited(name, id string, code int32, restarts int) runtime.ContainerStatus {
	return runtime.ContainerStatus{ID: id, Name: name, State: runtime.ContainerStateExited, StartedAt: t0, FinishedAt: t0.Add(time.Second),
		ExitCode: code, RestartCount: restarts, Image: "busybox:latest"}
}

// summary is the part of a status the table checks, in words.
func summary(st corev1.PodStatus) []string {
	out := []string{"phase " + string(st.Phase)}
	describe := func(kind string, cs corev1.ContainerStatus) {
		s := fmt.Sprintf("%s %s: %s", kind, cs.Name, state(cs.State))
		if cs.LastTerminationState.Terminated != nil {
			s += " (last " + state(cs.LastTerminationState) + ")"
		}
		if cs.RestartCount > 0 {
			s += fmt.Sprintf(" restarts=%d", cs.RestartCount)
		}
		if cs.Ready {
			s += " ready"
		}
		out = append(out, s)
	}
	for _, cs := range st.InitContainerStatuses {
		describe("init", cs)
	}
	for _, cs := range st.ContainerStatuses {
		describe("app", cs)
	}
	for _, c := range st.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " " + c.Reason
		}
		out = append(out, s)
	}
	return out
}

func state(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %d %s", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason
	}
	return "none"
}

func conds(ready, init, ok bool, notReadyReason string) []string {
	b := func(v bool) string {
		if v {
			return "True"
		}
		return "False"
	}
	out := []string{"PodReadyToStartContainers=" + b(ready)}
	if init {
		out = append(out, "Initialized=True")
	} else {
		out = append(out, "Initialized=False ContainersNotInitialized")
	}
	if ok {
		out = append(out, "Ready=True", "ContainersReady=True")
	} else {
		out = append(out, "Ready=False "+notReadyReason, "ContainersReady=False "+notReadyReason)
	}
	return append(out, "PodScheduled=True")
}

func TestGenerate(t *testing.T) {
	backoff := &runtime.BackoffError{Container: "main", Until: now.Add(10 * time.Second), Delay: 10 * time.Second}
	tests := []struct {
		name string
		in   Input
		want []string
	}{{
		name: "nothing in the runtime yet",
		in:   Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main")},
		want: append([]string{"phase Pending", "app main: waiting ContainerCreating"}, conds(false, true, false, "ContainersNotReady")...),
	}, {
		name: "with init containers, everything waits for initialization",
		in:   Input{Pod: testPod(corev1.RestartPolicyAlways, []string{"setup"}, "main")},
		want: append([]string{"phase Pending", "init setup: waiting PodInitializing", "app main: waiting PodInitializing"}, conds(false, false, false, "ContainersNotReady")...),
	}, {
		name: "init container running",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, []string{"setup"}, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("setup", "i1")}}},
		want: append([]string{"phase Pending", "init setup: running", "app main: waiting PodInitializing"}, conds(true, false, false, "ContainersNotReady")...),
	}, {
		name: "initialized and running",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, []string{"setup"}, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1"), exited("setup", "i1", 0, 0)}}},
		want: append([]string{"phase Running", "init setup: terminated 0 Completed ready", "app main: running ready"}, conds(true, true, true, "")...),
	}, {
		name: "init container failed under Never",
		in: Input{Pod: testPod(corev1.RestartPolicyNever, []string{"setup"}, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("setup", "i1", 2, 0)}}},
		want: append([]string{"phase Failed", "init setup: terminated 2 Error", "app main: waiting PodInitializing"}, conds(false, false, false, "PodCompleted")...),
	}, {
		name: "init container failed under OnFailure waits for its restart",
		in: Input{Pod: testPod(corev1.RestartPolicyOnFailure, []string{"setup"}, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("setup", "i1", 2, 0)}}},
		want: append([]string{"phase Pending", "init setup: terminated 2 Error", "app main: waiting PodInitializing"}, conds(true, false, false, "ContainersNotReady")...),
	}, {
		name: "exited under Always is restarting: Running",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("main", "c1", 1, 0)}}},
		want: append([]string{"phase Running", "app main: terminated 1 Error"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "all succeeded under OnFailure",
		in: Input{Pod: testPod(corev1.RestartPolicyOnFailure, nil, "a", "b"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("a", "c1", 0, 0), exited("b", "c2", 0, 0)}}},
		want: append([]string{"phase Succeeded", "app a: terminated 0 Completed", "app b: terminated 0 Completed"}, conds(false, true, false, "PodCompleted")...),
	}, {
		name: "one failed under OnFailure is restarting",
		in: Input{Pod: testPod(corev1.RestartPolicyOnFailure, nil, "a", "b"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("a", "c1", 0, 0), exited("b", "c2", 1, 0)}}},
		want: append([]string{"phase Running", "app a: terminated 0 Completed", "app b: terminated 1 Error"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "one failed under Never",
		in: Input{Pod: testPod(corev1.RestartPolicyNever, nil, "a", "b"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("a", "c1", 0, 0), exited("b", "c2", 1, 0)}}},
		want: append([]string{"phase Failed", "app a: terminated 0 Completed", "app b: terminated 1 Error"}, conds(false, true, false, "PodCompleted")...),
	}, {
		name: "one still running under Never",
		in: Input{Pod: testPod(corev1.RestartPolicyNever, nil, "a", "b"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("a", "c1", 1, 0), running("b", "c2")}}},
		want: append([]string{"phase Running", "app a: terminated 1 Error", "app b: running ready"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "crash loop back-off: waiting, the exit becomes the last termination",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{exited("main", "c2", 1, 3), exited("main", "c1", 1, 2)}},
			Result:  &runtime.SyncResult{Actions: []runtime.Action{{Kind: runtime.ActionStartContainer, Container: "main", Err: backoff}}},
			Err:     backoff},
		want: append([]string{"phase Running", "app main: waiting CrashLoopBackOff (last terminated 1 Error) restarts=3"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "restarted: the previous instance is the last termination",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{func() runtime.ContainerStatus {
				c := running("main", "c2")
				c.RestartCount = 1
				return c
			}(), exited("main", "c1", 137, 0)}}},
		want: append([]string{"phase Running", "app main: running (last terminated 137 Error) restarts=1 ready"}, conds(true, true, true, "")...),
	}, {
		name: "image that may not be pulled",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox()},
			Result:  &runtime.SyncResult{Actions: []runtime.Action{{Kind: runtime.ActionStartContainer, Container: "main", Err: runtime.ErrImageNeverPull}}},
			Err:     runtime.ErrImageNeverPull},
		want: append([]string{"phase Pending", "app main: waiting ErrImageNeverPull"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "sandbox creation failed: every container says so",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "a", "b"),
			Result: &runtime.SyncResult{Actions: []runtime.Action{{Kind: runtime.ActionCreateSandbox, Err: runtime.ErrCreateSandbox}}},
			Err:    fmt.Errorf("pod default/web: %w", runtime.ErrCreateSandbox)},
		want: append([]string{"phase Pending", "app a: waiting CreatePodSandboxError", "app b: waiting CreatePodSandboxError"}, conds(false, true, false, "ContainersNotReady")...),
	}, {
		name: "created, not started",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"),
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{{ID: "c1", Name: "main", State: runtime.ContainerStateCreated}}}},
		want: append([]string{"phase Pending", "app main: waiting ContainerCreating"}, conds(true, true, false, "ContainersNotReady")...),
	}, {
		name: "stopped for good before it ran: Failed",
		in:   Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"), Terminal: true},
		want: append([]string{"phase Failed", "app main: waiting ContainerCreating"}, conds(false, true, false, "PodCompleted")...),
	}, {
		name: "stopped for good after all exited 0 under Always: Succeeded",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"), Terminal: true,
			Runtime: &runtime.PodStatus{Containers: []runtime.ContainerStatus{exited("main", "c1", 0, 0)}}},
		want: append([]string{"phase Succeeded", "app main: terminated 0 Completed"}, conds(false, true, false, "PodCompleted")...),
	}, {
		name: "a terminal phase is never left",
		in: Input{Pod: testPod(corev1.RestartPolicyAlways, nil, "main"), Previous: &corev1.PodStatus{Phase: corev1.PodSucceeded},
			Runtime: &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}},
		want: append([]string{"phase Succeeded", "app main: running"}, conds(false, true, false, "PodCompleted")...),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			if diff := cmp.Diff(tt.want, summary(Generate(tt.in))); diff != "" {
				t.Errorf("Generate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateDetails(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].Image = "busybox"
	rs := &runtime.PodStatus{IPs: []string{"10.1.0.5", "fd00::5"}, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}
	st := Generate(Input{Pod: pod, Runtime: rs, Now: now})

	wantCS := corev1.ContainerStatus{
		Name:        "main",
		State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
		Ready:       true,
		Started:     new(true),
		Image:       "busybox:latest",
		ImageID:     "sha256:abc",
		ContainerID: "containerd://c1",
		// The container's resources as allocated, none here (the
		// kubelet's too reports an empty list).
		Resources: &corev1.ResourceRequirements{},
	}
	if diff := cmp.Diff([]corev1.ContainerStatus{wantCS}, st.ContainerStatuses); diff != "" {
		t.Errorf("container statuses (-want +got):\n%s", diff)
	}
	if st.PodIP != "10.1.0.5" || len(st.PodIPs) != 2 || st.PodIPs[1].IP != "fd00::5" {
		t.Errorf("pod IPs = %q %v", st.PodIP, st.PodIPs)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(now) {
		t.Errorf("start time = %v, want %v", st.StartTime, now)
	}
	if st.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("QoS = %s", st.QOSClass)
	}

	// A later status keeps the start time and unchanged transition times,
	// and moves the transition time of a condition that changed.
	later := now.Add(time.Hour)
	rs.Containers[0].State = runtime.ContainerStateExited
	next := Generate(Input{Pod: pod, Runtime: rs, Previous: &st, Now: later})
	if !next.StartTime.Time.Equal(now) {
		t.Errorf("start time moved to %v", next.StartTime)
	}
	for _, c := range next.Conditions {
		want := now
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			want = later
		}
		if !c.LastTransitionTime.Time.Equal(want) {
			t.Errorf("%s transition time = %v, want %v", c.Type, c.LastTransitionTime, want)
		}
	}
}

func TestGenerateVolumesNotReady(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "app")
	rs := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox()}
	cond := func(st corev1.PodStatus) corev1.PodCondition {
		for _, c := range st.Conditions {
			if c.Type == corev1.PodReadyToStartContainers {
				return c
			}
		}
		t.Fatal("no PodReadyToStartContainers condition")
		return corev1.PodCondition{}
	}
	err := fmt.Errorf(`volume "cfg": configmap default/app-config: not found`)
	waiting := Generate(Input{Pod: pod, Runtime: rs, Err: err, VolumesErr: err, Now: now})
	if c := cond(waiting); c.Status != corev1.ConditionFalse || c.Reason != ReasonFailedMount || c.Message != err.Error() {
		t.Errorf("condition = %+v, want False, %s, %q", c, ReasonFailedMount, err)
	}
	if waiting.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", waiting.Phase)
	}
	set := Generate(Input{Pod: pod, Runtime: rs, Previous: &waiting, Now: now.Add(time.Second)})
	if c := cond(set); c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "" {
		t.Errorf("once the volumes are set up: condition = %+v, want True without reason", c)
	}
}

// Once a finished pod's containers are removed (all of them, or some: an
// agent stopped while it removed them), its status is what it ended with:
// the containers' own messages unchanged, its IPs kept.
func TestGenerateAfterTheContainersAreRemoved(t *testing.T) {
	pod := testPod(corev1.RestartPolicyNever, nil, "a", "b")
	a, b := exited("a", "c1", 0, 0), exited("b", "c2", 3, 0)
	a.Message, b.Message = `{"result": 42}`, ""
	rs := &runtime.PodStatus{ID: pod.UID, IPs: []string{"10.1.0.5"}, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{a, b}}
	final := Generate(Input{Pod: pod, Runtime: rs, Terminal: true, Now: now})
	if final.Phase != corev1.PodFailed || final.PodIP != "10.1.0.5" {
		t.Fatalf("final status: phase %s IP %q, want Failed with 10.1.0.5", final.Phase, final.PodIP)
	}

	later := now.Add(time.Hour)
	if got := Generate(Input{Pod: pod, Runtime: &runtime.PodStatus{ID: pod.UID}, Terminal: true, Previous: &final, Now: later}); !cmp.Equal(got, final) {
		t.Errorf("with nothing left in the runtime (-final +got):\n%s", cmp.Diff(final, got))
	}
	partial := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{b}}
	got := Generate(Input{Pod: pod, Runtime: partial, Terminal: true, Previous: &final, Now: later})
	if diff := cmp.Diff(final.ContainerStatuses, got.ContainerStatuses); diff != "" {
		t.Errorf("with one container left in the runtime: container statuses (-final +got):\n%s", diff)
	}
	if got.Phase != corev1.PodFailed {
		t.Errorf("with one container left: phase %s, want Failed", got.Phase)
	}
}

// An ephemeral container's status: waiting to be created, then as the
// runtime says, never ready; it changes neither the phase nor readiness.
func TestGenerateEphemeralContainers(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
	rs := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}
	st := Generate(Input{Pod: pod, Runtime: rs, Now: now})
	if es := st.EphemeralContainerStatuses; len(es) != 1 || es[0].Name != "debug" || es[0].State.Waiting == nil || es[0].State.Waiting.Reason != ReasonContainerCreating {
		t.Fatalf("before it is created: %+v, want debug waiting, %s", es, ReasonContainerCreating)
	}
	rs.Containers = append(rs.Containers, running("debug", "c2"))
	next := Generate(Input{Pod: pod, Runtime: rs, Previous: &st, Now: now})
	if es := next.EphemeralContainerStatuses; len(es) != 1 || es[0].State.Running == nil || es[0].Ready || es[0].ContainerID != "containerd://c2" {
		t.Fatalf("once it runs: %+v, want debug running, not ready", es)
	}
	if next.Phase != corev1.PodRunning || !isTrue(next.Conditions, corev1.PodReady) {
		t.Errorf("phase %s, Ready %v: want Running and ready, whatever the ephemeral container", next.Phase, isTrue(next.Conditions, corev1.PodReady))
	}
}

func isTrue(conds []corev1.PodCondition, typ corev1.PodConditionType) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestGenerateActiveDeadline(t *testing.T) {
	rs := &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}
	started := metav1.NewTime(t0)
	for _, tc := range []struct {
		name     string
		deadline *int64
		prev     corev1.PodStatus
		apiStart *metav1.Time // the start time in the apiserver's status
		now      time.Time
		phase    corev1.PodPhase
		reason   string
	}{
		{"no deadline", nil, corev1.PodStatus{StartTime: &started}, nil, t0.Add(time.Hour), corev1.PodRunning, ""},
		{"before the deadline", new(int64(60)), corev1.PodStatus{StartTime: &started}, nil, t0.Add(59 * time.Second), corev1.PodRunning, ""},
		{"at the deadline", new(int64(60)), corev1.PodStatus{StartTime: &started}, nil, t0.Add(60 * time.Second), corev1.PodFailed, ReasonDeadlineExceeded},
		{"past it", new(int64(5)), corev1.PodStatus{StartTime: &started}, nil, t0.Add(time.Minute), corev1.PodFailed, ReasonDeadlineExceeded},
		{"first status: starts now", new(int64(5)), corev1.PodStatus{}, nil, t0.Add(time.Hour), corev1.PodRunning, ""},
		{"first status of a pod the apiserver says started: its start counts", new(int64(5)), corev1.PodStatus{}, &started, t0.Add(time.Minute), corev1.PodFailed, ReasonDeadlineExceeded},
		{"succeeded before: stays so", new(int64(5)), corev1.PodStatus{StartTime: &started, Phase: corev1.PodSucceeded}, nil, t0.Add(time.Minute), corev1.PodSucceeded, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, nil, "main")
			pod.Spec.ActiveDeadlineSeconds = tc.deadline
			pod.Status.StartTime = tc.apiStart
			st := Generate(Input{Pod: pod, Runtime: rs, Previous: &tc.prev, Now: tc.now})
			if st.Phase != tc.phase || st.Reason != tc.reason {
				t.Errorf("phase %s reason %q, want %s %q", st.Phase, st.Reason, tc.phase, tc.reason)
			}
			if tc.reason != "" {
				if st.Message != MessageDeadlineExceeded {
					t.Errorf("message %q", st.Message)
				}
				if st.ContainerStatuses[0].Ready {
					t.Error("a container of a failed pod is ready")
				}
			}
		})
	}
}

// An evicted pod fails with reason Evicted, and carries the kubelet's
// DisruptionTarget condition, whose time stays that of the first status.
func TestGenerateEvicted(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "app")
	rs := &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("app", "c1")}}
	msg := "The node was low on resource: memory. "
	st := Generate(Input{Pod: pod, Runtime: rs, Now: now, Evicted: msg})
	if st.Phase != corev1.PodFailed || st.Reason != ReasonEvicted || st.Message != msg {
		t.Fatalf("phase %s reason %s message %q", st.Phase, st.Reason, st.Message)
	}
	var found *corev1.PodCondition
	for i, c := range st.Conditions {
		if c.Type == corev1.DisruptionTarget {
			found = &st.Conditions[i]
		}
	}
	if found == nil || found.Status != corev1.ConditionTrue || found.Reason != corev1.PodReasonTerminationByKubelet || found.Message != msg {
		t.Fatalf("DisruptionTarget %+v", found)
	}
	again := Generate(Input{Pod: pod, Runtime: rs, Now: now.Add(time.Minute), Evicted: msg, Previous: &st})
	n := 0
	for _, c := range again.Conditions {
		if c.Type == corev1.DisruptionTarget {
			n++
			if !c.LastTransitionTime.Equal(&found.LastTransitionTime) {
				t.Errorf("DisruptionTarget moved from %v to %v", found.LastTransitionTime, c.LastTransitionTime)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d DisruptionTarget conditions, want 1", n)
	}
}
