package admission

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// underPressure admits a new pod on a node with the given pressure
// conditions (those True: MemoryPressure, DiskPressure, PIDPressure), as
// the kubelet's eviction manager does: a critical pod always; under
// MemoryPressure alone, every pod but a BestEffort one that does not
// tolerate the node.kubernetes.io/memory-pressure taint; under any other
// pressure, none.
func underPressure(pod *corev1.Pod, conditions []corev1.NodeConditionType) Result {
	if len(conditions) == 0 || podtypes.IsCritical(pod) {
		return Result{}
	}
	if len(conditions) == 1 && conditions[0] == corev1.NodeMemoryPressure {
		if podtypes.QOSClass(pod) != corev1.PodQOSBestEffort || toleratesMemoryPressure(pod) {
			return Result{}
		}
	}
	sorted := slices.Clone(conditions)
	slices.Sort(sorted)
	// The kubelet refuses it with the reason of a pod evicted for it.
	return Result{Reason: status.ReasonEvicted, Message: fmt.Sprintf("The node had condition: %v. ", sorted)}
}

// pressureOf lists the pressure conditions the Node reports True.
func pressureOf(node *corev1.Node) []corev1.NodeConditionType {
	if node == nil {
		return nil
	}
	var out []corev1.NodeConditionType
	for _, c := range node.Status.Conditions {
		switch c.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
			if c.Status == corev1.ConditionTrue {
				out = append(out, c.Type)
			}
		}
	}
	return out
}

func toleratesMemoryPressure(pod *corev1.Pod) bool {
	taint := &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(logr.Discard(), taint, false) {
			return true
		}
	}
	return false
}
