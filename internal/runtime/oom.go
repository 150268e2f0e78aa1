package runtime

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The kernel's OOM killer prefers the process with the highest
// oom_score_adj. The kubelet's scale, kept here: Guaranteed and
// node-critical pods just above the agent and the runtime (-999), BestEffort
// first to go, Burstable in between by its share of the machine's memory,
// never reaching either end.
const (
	guaranteedOOMScoreAdj = -997
	bestEffortOOMScoreAdj = 1000
	minBurstableOOMScore  = 1000 + guaranteedOOMScoreAdj // 3
	maxBurstableOOMScore  = bestEffortOOMScoreAdj - 1    // 999

	nodeCriticalClassName = "system-node-critical"
)

// oomScoreAdj is the OOM score adjustment of container c of pod on a
// machine of memoryCapacity bytes. A Burstable container scores
// 1000 - 1000*request/capacity, between 3 and 999; a sidecar (restartable
// init container) scores no higher than the app container with the
// smallest memory request, so that it is not killed before the containers
// it serves. A capacity of zero (unknown) counts every request as nothing.
func oomScoreAdj(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int64 {
	if isNodeCritical(pod) {
		return guaranteedOOMScoreAdj
	}
	switch podtypes.QOSClass(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return bestEffortOOMScoreAdj
	}
	score := burstableScore(c.Resources.Requests.Memory().Value(), memoryCapacity)
	if isSidecarOf(pod, c) && len(pod.Spec.Containers) > 0 {
		smallest := pod.Spec.Containers[0].Resources.Requests.Memory().Value()
		for i := range pod.Spec.Containers[1:] {
			smallest = min(smallest, pod.Spec.Containers[i+1].Resources.Requests.Memory().Value())
		}
		score = min(score, burstableScore(smallest, memoryCapacity))
	}
	return min(max(score, minBurstableOOMScore), maxBurstableOOMScore)
}

func burstableScore(request, capacity int64) int64 {
	if capacity <= 0 {
		return bestEffortOOMScoreAdj
	}
	return bestEffortOOMScoreAdj - 1000*request/capacity
}

// isSidecarOf tells whether c is one of pod's init containers and a sidecar.
func isSidecarOf(pod *corev1.Pod, c *corev1.Container) bool {
	if !podtypes.IsSidecar(c) {
		return false
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}

// isNodeCritical tells whether the pod is critical (static, mirror, or of
// a critical priority) and of the system-node-critical class.
func isNodeCritical(pod *corev1.Pod) bool {
	return podtypes.IsCritical(pod) && pod.Spec.PriorityClassName == nodeCriticalClassName
}
