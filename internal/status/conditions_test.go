package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func TestReadinessGates(t *testing.T) {
	const g1, g2 = corev1.PodConditionType("example.com/one"), corev1.PodConditionType("example.com/two")
	runningPod := &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}
	waitingPod := &runtime.PodStatus{Sandboxes: readySandbox()}
	type cond struct {
		Type            corev1.PodConditionType
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	tests := []struct {
		name  string
		gates []corev1.PodConditionType
		// set is the gates' conditions in the apiserver's status of the pod.
		set     map[corev1.PodConditionType]corev1.ConditionStatus
		runtime *runtime.PodStatus
		// ready and containersReady are the two conditions the gates bear on.
		ready, containersReady cond
	}{{
		name:            "no gates: ready with the containers",
		runtime:         runningPod,
		ready:           cond{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		containersReady: cond{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}, {
		name:    "a gate's condition missing",
		gates:   []corev1.PodConditionType{g1},
		runtime: runningPod,
		ready: cond{corev1.PodReady, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`corresponding condition of pod readiness gate "example.com/one" does not exist.`},
		containersReady: cond{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}, {
		name:    "one gate true, the other false",
		gates:   []corev1.PodConditionType{g1, g2},
		set:     map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionTrue, g2: corev1.ConditionFalse},
		runtime: runningPod,
		ready: cond{corev1.PodReady, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`the status of pod readiness gate "example.com/two" is not "True", but False`},
		containersReady: cond{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}, {
		name:    "every gate unsatisfied: one message each",
		gates:   []corev1.PodConditionType{g1, g2},
		set:     map[corev1.PodConditionType]corev1.ConditionStatus{g2: corev1.ConditionUnknown},
		runtime: runningPod,
		ready: cond{corev1.PodReady, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`corresponding condition of pod readiness gate "example.com/one" does not exist., the status of pod readiness gate "example.com/two" is not "True", but Unknown`},
		containersReady: cond{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}, {
		name:            "every gate true",
		gates:           []corev1.PodConditionType{g1, g2},
		set:             map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionTrue, g2: corev1.ConditionTrue},
		runtime:         runningPod,
		ready:           cond{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		containersReady: cond{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
	}, {
		name:            "gates true, containers not ready: the containers' reason",
		gates:           []corev1.PodConditionType{g1},
		set:             map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionTrue},
		runtime:         waitingPod,
		ready:           cond{corev1.PodReady, corev1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [main]"},
		containersReady: cond{corev1.ContainersReady, corev1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [main]"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, nil, "main")
			for _, g := range tc.gates {
				pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
			}
			for _, g := range []corev1.PodConditionType{g1, g2} {
				if s, ok := tc.set[g]; ok {
					pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: g, Status: s})
				}
			}
			// The apiserver's copy also holds the agent's own conditions as
			// last written: they are the agent's to compute, not to carry.
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionUnknown})
			st := Generate(Input{Pod: pod, Runtime: tc.runtime, Now: now})
			got := map[corev1.PodConditionType]cond{}
			var order []corev1.PodConditionType
			for _, c := range st.Conditions {
				got[c.Type] = cond{c.Type, c.Status, c.Reason, c.Message}
				order = append(order, c.Type)
			}
			if diff := cmp.Diff(tc.ready, got[corev1.PodReady]); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.containersReady, got[corev1.ContainersReady]); diff != "" {
				t.Errorf("ContainersReady (-want +got):\n%s", diff)
			}
			// Others' conditions are carried as they are, first.
			var want []corev1.PodConditionType
			for _, g := range []corev1.PodConditionType{g1, g2} {
				if _, ok := tc.set[g]; ok {
					want = append(want, g)
				}
			}
			want = append(want, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled)
			if diff := cmp.Diff(want, order); diff != "" {
				t.Errorf("condition order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGateConditionsDiffer(t *testing.T) {
	const g = corev1.PodConditionType("example.com/one")
	with := func(s corev1.ConditionStatus) []corev1.PodCondition {
		if s == "" {
			return nil
		}
		return []corev1.PodCondition{{Type: g, Status: s}, {Type: "example.com/not-a-gate", Status: corev1.ConditionTrue}}
	}
	for _, tc := range []struct {
		name      string
		gated     bool
		api, last corev1.ConditionStatus
		want      bool
	}{
		{"no gates", false, corev1.ConditionTrue, "", false},
		{"the same", true, corev1.ConditionTrue, corev1.ConditionTrue, false},
		{"set in the apiserver", true, corev1.ConditionTrue, "", true},
		{"removed in the apiserver", true, "", corev1.ConditionTrue, true},
		{"flipped", true, corev1.ConditionFalse, corev1.ConditionTrue, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, nil, "main")
			if tc.gated {
				pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: g}}
			}
			pod.Status.Conditions = with(tc.api)
			if got := GateConditionsDiffer(pod, &corev1.PodStatus{Conditions: with(tc.last)}); got != tc.want {
				t.Errorf("GateConditionsDiffer = %v, want %v", got, tc.want)
			}
		})
	}
}

// A probe's result, applied at once (WithProbes), reaches ContainersReady;
// Ready still waits for the readiness gates.
func TestWithProbesKeepsTheReadinessGates(t *testing.T) {
	const gate = corev1.PodConditionType("example.com/one")
	pod := testPod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	rs := &runtime.PodStatus{ID: pod.UID, Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{running("main", "c1")}}
	passed := fakeProbes{ready: map[string]bool{"c1": true}}
	for _, tc := range []struct {
		gate corev1.ConditionStatus
		want corev1.ConditionStatus
	}{
		{corev1.ConditionFalse, corev1.ConditionFalse},
		{corev1.ConditionTrue, corev1.ConditionTrue},
	} {
		pod.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: tc.gate}}
		before := Generate(Input{Pod: pod, Runtime: rs, Now: t0})
		after := WithProbes(pod, &before, passed, now)
		if got := condStatus(after, corev1.ContainersReady); got != corev1.ConditionTrue {
			t.Errorf("gate %s: ContainersReady = %s, want True", tc.gate, got)
		}
		if got := condStatus(after, corev1.PodReady); got != tc.want {
			t.Errorf("gate %s: Ready = %s, want %s", tc.gate, got, tc.want)
		}
	}
}
