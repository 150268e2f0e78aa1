package status

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

type fakeProbes struct {
	started, ready map[string]bool
	killed         map[string]string
}

func (f fakeProbes) Started(id string) bool      { return f.started[id] }
func (f fakeProbes) Ready(id string) bool        { return f.ready[id] }
func (f fakeProbes) KillReason(id string) string { return f.killed[id] }

func condStatus(st corev1.PodStatus, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func TestProbesDecideStartedAndReady(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "plain", "ready", "startup")
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
	pod.Spec.Containers[1].ReadinessProbe = probe
	pod.Spec.Containers[2].StartupProbe = probe
	rs := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(),
		Containers: []runtime.ContainerStatus{running("plain", "c1"), running("ready", "c2"), running("startup", "c3")}}

	for _, tc := range []struct {
		name     string
		probes   Probes
		ready    [3]bool
		started3 bool
		podReady corev1.ConditionStatus
	}{
		{"nothing probed yet", nil, [3]bool{true, false, false}, false, corev1.ConditionFalse},
		{"readiness passed", fakeProbes{ready: map[string]bool{"c2": true}}, [3]bool{true, true, false}, false, corev1.ConditionFalse},
		{"all passed", fakeProbes{ready: map[string]bool{"c2": true}, started: map[string]bool{"c3": true}}, [3]bool{true, true, true}, true, corev1.ConditionTrue},
	} {
		st := Generate(Input{Pod: pod, Runtime: rs, Probes: tc.probes, Now: now})
		for i, cs := range st.ContainerStatuses {
			if cs.Ready != tc.ready[i] {
				t.Errorf("%s: %s ready = %v, want %v", tc.name, cs.Name, cs.Ready, tc.ready[i])
			}
		}
		if got := *st.ContainerStatuses[2].Started; got != tc.started3 {
			t.Errorf("%s: started = %v, want %v", tc.name, got, tc.started3)
		}
		if got := condStatus(st, corev1.PodReady); got != tc.podReady {
			t.Errorf("%s: Ready = %v, want %v", tc.name, got, tc.podReady)
		}
		// WithProbes, from the status generated with nothing probed, comes
		// to the same readiness.
		before := Generate(Input{Pod: pod, Runtime: rs, Now: t0})
		after := WithProbes(pod, &before, tc.probes, now)
		if condStatus(after, corev1.PodReady) != tc.podReady || condStatus(after, corev1.ContainersReady) != tc.podReady {
			t.Errorf("%s: WithProbes conditions = %+v", tc.name, after.Conditions)
		}
		if tc.podReady == corev1.ConditionTrue && !after.Conditions[2].LastTransitionTime.Time.Equal(now) {
			t.Errorf("%s: the Ready transition is stamped %v, want %v", tc.name, after.Conditions[2].LastTransitionTime, now)
		}
	}
}

func TestKilledContainerSaysWhy(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "app")
	old := runtime.ContainerStatus{ID: "c1", Name: "app", State: runtime.ContainerStateExited, ExitCode: 137, StartedAt: t0, FinishedAt: t0}
	rs := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("app", "c2"), old}}
	st := Generate(Input{Pod: pod, Runtime: rs, Probes: fakeProbes{killed: map[string]string{"c1": "Liveness probe failed: 500"}}, Now: now})
	last := st.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || !strings.Contains(last.Message, "Liveness probe failed: 500") {
		t.Fatalf("last termination = %+v", last)
	}
}

// A sidecar is reported in initContainerStatuses, ready while it runs and
// its readiness probe (if any) passes; the pod is ready only with it.
func TestSidecarReadiness(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, []string{"proxy", "setup"}, "app")
	always := corev1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers[0].RestartPolicy = &always
	pod.Spec.InitContainers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
	up := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(),
		Containers: []runtime.ContainerStatus{running("app", "c3"), exited("setup", "c2", 0, 0), running("proxy", "c1")}}
	down := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(),
		Containers: []runtime.ContainerStatus{running("app", "c3"), exited("proxy", "c4", 1, 0), exited("setup", "c2", 0, 0)}}

	for _, tc := range []struct {
		name       string
		rs         *runtime.PodStatus
		probes     Probes
		proxyReady bool
		podReady   corev1.ConditionStatus
	}{
		{"running, readiness not passed", up, nil, false, corev1.ConditionFalse},
		{"running, readiness passed", up, fakeProbes{ready: map[string]bool{"c1": true}}, true, corev1.ConditionTrue},
		{"exited", down, fakeProbes{ready: map[string]bool{"c1": true}}, false, corev1.ConditionFalse},
	} {
		st := Generate(Input{Pod: pod, Runtime: tc.rs, Probes: tc.probes, Now: now})
		if len(st.InitContainerStatuses) != 2 || st.InitContainerStatuses[0].Name != "proxy" {
			t.Fatalf("%s: init container statuses = %+v", tc.name, st.InitContainerStatuses)
		}
		if got := st.InitContainerStatuses[0].Ready; got != tc.proxyReady {
			t.Errorf("%s: proxy ready = %v, want %v", tc.name, got, tc.proxyReady)
		}
		if !st.ContainerStatuses[0].Ready {
			t.Errorf("%s: app not ready", tc.name)
		}
		if got := condStatus(st, corev1.PodReady); got != tc.podReady {
			t.Errorf("%s: Ready = %v, want %v", tc.name, got, tc.podReady)
		}
		before := Generate(Input{Pod: pod, Runtime: tc.rs, Now: t0})
		if got := condStatus(WithProbes(pod, &before, tc.probes, now), corev1.ContainersReady); got != tc.podReady {
			t.Errorf("%s: WithProbes ContainersReady = %v, want %v", tc.name, got, tc.podReady)
		}
	}
}
