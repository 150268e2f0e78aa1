package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		res := UnderPressure(tc.pod, tc.conditions)
		if res.Message != tc.message || (tc.message != "") != (res.Reason == ReasonEvicted) {
			t.Errorf("%s: %+v, want message %q", name, res, tc.message)
		}
	}
}
