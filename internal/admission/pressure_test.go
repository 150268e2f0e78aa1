package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/status"
)

func TestUnderPressure(t *testing.T) {
	bestEffort := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "be", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	burstable := bestEffort.DeepCopy()
	burstable.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	tolerant := bestEffort.DeepCopy()
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	critical := bestEffort.DeepCopy()
	critical.Namespace = metav1.NamespaceSystem
	critical.Spec.PriorityClassName = "system-node-critical"
	prio := int32(2000001000) // as the apiserver's priority admission sets it
	critical.Spec.Priority = &prio
	mem := []corev1.NodeConditionType{corev1.NodeMemoryPressure}
	disk := []corev1.NodeConditionType{corev1.NodeDiskPressure}
	both := []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure}
	for name, tc := range map[string]struct {
		pod        *corev1.Pod
		conditions []corev1.NodeConditionType
		message    string // "" admitted
	}{
		"no pressure":                        {bestEffort, nil, ""},
		"memory, best effort":                {bestEffort, mem, "The node had condition: [MemoryPressure]. "},
		"memory, burstable":                  {burstable, mem, ""},
		"memory, best effort that tolerates": {tolerant, mem, ""},
		"disk, burstable":                    {burstable, disk, "The node had condition: [DiskPressure]. "},
		"memory and disk, tolerant":          {tolerant, both, "The node had condition: [DiskPressure MemoryPressure]. "},
		"PID, burstable":                     {burstable, []corev1.NodeConditionType{corev1.NodePIDPressure}, "The node had condition: [PIDPressure]. "},
		"disk, critical":                     {critical, both, ""},
	} {
		res := underPressure(tc.pod, tc.conditions)
		if res.Message != tc.message || (tc.message != "") != (res.Reason == status.ReasonEvicted) {
			t.Errorf("%s: %+v, want message %q", name, res, tc.message)
		}
	}
}

// An API pod is refused under pressure before anything else is checked,
// as the kubelet's eviction manager admits first.
func TestAdmitAPIPodUnderPressure(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}, {Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}},
		Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")},
	}}
	sysctls, err := NewSysctls(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := AdmitAPIPod(pod, node, nil, sysctls, NewHostPorts())
	if res.Reason != status.ReasonEvicted || res.Message != "The node had condition: [DiskPressure]. " {
		t.Errorf("under DiskPressure: %+v", res)
	}
	node.Status.Conditions[0].Status = corev1.ConditionFalse
	if res := AdmitAPIPod(pod, node, nil, sysctls, NewHostPorts()); res.Reason != "" {
		t.Errorf("without pressure: %+v", res)
	}
}
