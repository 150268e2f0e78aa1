package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestBinaryAdmissionUnderPressure: under MemoryPressure (a threshold no
// node meets: memory.available must stay above all of it) a new
// BestEffort pod from the apiserver is refused as the kubelet refuses it,
// Failed with reason Evicted, and a Burstable one runs. The threshold is
// soft, with a grace period longer than the test: a soft threshold met
// makes the pressure at once, and evicts nothing before its grace period.
func TestBinaryAdmissionUnderPressure(t *testing.T) {
	h := newConnectedAgent(t, "--eviction-soft=memory.available<100%", "--eviction-soft-grace-period=memory.available=1h")
	waitNode(t, "MemoryPressure", 60*time.Second, func(n *corev1.Node) bool {
		return nodeCondition(n, corev1.NodeMemoryPressure).Status == corev1.ConditionTrue
	})

	bestEffort := h.createAPIPod(h.apiPodSpec("pressure-besteffort", shContainer("main", sleepForever)))
	p := h.waitAPIPod(bestEffort.Name, "Failed", 30*time.Second, func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != "The node had condition: [MemoryPressure]. " {
		t.Errorf("BestEffort pod under MemoryPressure: %s %q, want Evicted and the kubelet's message", p.Status.Reason, p.Status.Message)
	}
	if n := len(h.sandboxes("pressure-besteffort")); n != 0 {
		t.Errorf("the refused pod has %d sandboxes", n)
	}

	// Requests make it Burstable.
	c := shContainer("main", sleepForever)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	burstable := h.createAPIPod(h.apiPodSpec("pressure-burstable", c))
	h.waitAPIPod(burstable.Name, "Running", 60*time.Second, func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodRunning })
}
