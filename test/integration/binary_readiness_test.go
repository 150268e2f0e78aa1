package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod's readiness gates, as the kubelet honours them: Ready is True only
// when its containers are ready and every gate's condition, set in the
// apiserver by someone else, is True; and the agent's own status writes
// never remove those conditions.
func TestBinaryReadinessGates(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	const g1, g2 = corev1.PodConditionType("example.com/gate-one"), corev1.PodConditionType("example.com/gate-two")
	pod := h.apiPodSpec("gated", shContainer("main", sleepForever))
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: g1}, {ConditionType: g2}}
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "running, its containers ready, itself not", 60*time.Second, func(p *corev1.Pod) bool {
		if p == nil {
			return false
		}
		ready := podCondition(p, corev1.PodReady)
		return apiPodRunning(created.UID)(p) && ready != nil && ready.Status == corev1.ConditionFalse &&
			ready.Reason == "ReadinessGatesNotReady" &&
			ready.Message == `corresponding condition of pod readiness gate "example.com/gate-one" does not exist., `+
				`corresponding condition of pod readiness gate "example.com/gate-two" does not exist.`
	})

	set := func(g corev1.PodConditionType, s corev1.ConditionStatus) {
		t.Helper()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, g, s)
		if _, err := env.AdminClient.CoreV1().Pods(pod.Namespace).Patch(context.Background(), pod.Name,
			types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	readyIs := func(s corev1.ConditionStatus, gates map[corev1.PodConditionType]corev1.ConditionStatus) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			if p == nil {
				return false
			}
			for g, want := range gates {
				if c := podCondition(p, g); c == nil || c.Status != want {
					return false
				}
			}
			c := podCondition(p, corev1.PodReady)
			return c != nil && c.Status == s
		}
	}

	set(g1, corev1.ConditionTrue)
	h.waitAPIPod(pod.Name, "Ready says gate two is missing", 30*time.Second, func(p *corev1.Pod) bool {
		if p == nil {
			return false
		}
		c := podCondition(p, corev1.PodReady)
		return c != nil && c.Message == `corresponding condition of pod readiness gate "example.com/gate-two" does not exist.`
	})
	// The agent has written since the gate was set; the gate's condition
	// is still there, and stays there through the agent's next writes.
	time.Sleep(3 * time.Second)
	h.waitAPIPod(pod.Name, "gate one kept, the pod not ready", time.Second,
		readyIs(corev1.ConditionFalse, map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionTrue}))

	set(g2, corev1.ConditionTrue)
	h.waitAPIPod(pod.Name, "Ready with both gates True", 30*time.Second,
		readyIs(corev1.ConditionTrue, map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionTrue, g2: corev1.ConditionTrue}))

	set(g1, corev1.ConditionFalse)
	p := h.waitAPIPod(pod.Name, "not Ready once gate one is False", 30*time.Second,
		readyIs(corev1.ConditionFalse, map[corev1.PodConditionType]corev1.ConditionStatus{g1: corev1.ConditionFalse, g2: corev1.ConditionTrue}))
	if c := podCondition(p, corev1.PodReady); c.Reason != "ReadinessGatesNotReady" ||
		c.Message != `the status of pod readiness gate "example.com/gate-one" is not "True", but False` {
		t.Errorf("Ready = %s %q, want the kubelet's reason and message", c.Reason, c.Message)
	}
	if c := podCondition(p, corev1.ContainersReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("ContainersReady = %+v, want True: the gates bear on Ready only", c)
	}
}
