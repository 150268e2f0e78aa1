package admission

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ReasonEvicted is the kubelet's reason for a pod refused while the node
// is under resource pressure, as for one evicted for it.
const ReasonEvicted = "Evicted"

// UnderPressure admits a new pod on a node with the given pressure
// conditions (those True: MemoryPressure, DiskPressure, PIDPressure), as
// the kubelet's eviction manager does: a critical pod always; under
// MemoryPressure alone, every pod but a BestEffort one that does not
// tolerate the node.kubernetes.io/memory-pressure taint; under any other
// pressure, none.
func UnderPressure(pod *corev1.Pod, conditions []corev1.NodeConditionType) Result {
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
	return Result{Reason: ReasonEvicted, Message: fmt.Sprintf("The node had condition: %v. ", sorted)}
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
