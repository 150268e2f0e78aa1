package status

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

func cpuMem(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func findCondition(st corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// A resize pending says why; one given and not yet done by the runtime
// is in progress, with its error if it failed; the containers report what
// they run with and what they were allocated; every condition and the
// status are of the pod's generation.
func TestResizeStatus(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, nil, "main")
	pod.Generation = 3
	pod.Spec.Containers[0].Resources = cpuMem("300m", "96Mi") // as allocated
	runsWith := func(r corev1.ResourceRequirements) *runtime.PodStatus {
		c := running("main", "c1")
		c.Resources = &r
		return &runtime.PodStatus{Sandboxes: readySandbox(), Containers: []runtime.ContainerStatus{c}}
	}
	failed := &runtime.SyncResult{Actions: []runtime.Action{{Kind: runtime.ActionResizeContainer, Container: "main",
		Err: fmt.Errorf("container \"main\": %w: %w", runtime.ErrResize, errors.New("EBUSY"))}}}
	for _, tc := range []struct {
		name                   string
		rs                     *runtime.PodStatus
		res                    *runtime.SyncResult
		pending                allocation.Pending
		wantPending            string // reason, "" for none
		wantInProgress         bool
		wantInProgressReason   string
		wantLimitCPU, wantReqs string
	}{
		{name: "done", rs: runsWith(cpuMem("300m", "96Mi")), wantLimitCPU: "300m", wantReqs: "300m"},
		{name: "in progress", rs: runsWith(cpuMem("200m", "96Mi")), wantInProgress: true, wantLimitCPU: "200m", wantReqs: "300m"},
		{name: "failed", rs: runsWith(cpuMem("200m", "96Mi")), res: failed, wantInProgress: true, wantInProgressReason: "Error", wantLimitCPU: "200m", wantReqs: "300m"},
		{name: "deferred", rs: runsWith(cpuMem("300m", "96Mi")), pending: allocation.Pending{Reason: "Deferred", Message: "m"},
			wantPending: "Deferred", wantLimitCPU: "300m", wantReqs: "300m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Generate(Input{Pod: pod, Runtime: tc.rs, Result: tc.res, Now: now, ResizePending: tc.pending})
			pc, ipc := findCondition(st, corev1.PodResizePending), findCondition(st, corev1.PodResizeInProgress)
			switch {
			case tc.wantPending == "" && pc != nil:
				t.Errorf("PodResizePending %+v, want none", pc)
			case tc.wantPending != "" && (pc == nil || pc.Reason != tc.wantPending || pc.Status != corev1.ConditionTrue || pc.ObservedGeneration != 3):
				t.Errorf("PodResizePending %+v, want True %s of generation 3", pc, tc.wantPending)
			}
			switch {
			case !tc.wantInProgress && ipc != nil:
				t.Errorf("PodResizeInProgress %+v, want none", ipc)
			case tc.wantInProgress && (ipc == nil || ipc.Reason != tc.wantInProgressReason || ipc.Status != corev1.ConditionTrue):
				t.Errorf("PodResizeInProgress %+v, want True with reason %q", ipc, tc.wantInProgressReason)
			}
			cs := st.ContainerStatuses[0]
			if cs.Resources == nil || cs.Resources.Limits.Cpu().String() != tc.wantLimitCPU || cs.AllocatedResources.Cpu().String() != tc.wantReqs {
				t.Errorf("container resources %v, allocated %v; want cpu limit %s, allocated %s", cs.Resources, cs.AllocatedResources, tc.wantLimitCPU, tc.wantReqs)
			}
			if st.ObservedGeneration != 3 || findCondition(st, corev1.PodReady).ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, Ready's %d; want 3", st.ObservedGeneration, findCondition(st, corev1.PodReady).ObservedGeneration)
			}
		})
	}
}
