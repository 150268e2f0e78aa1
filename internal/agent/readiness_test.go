package agent

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// A readiness gate's condition set by someone else (a RECONCILE: only the
// status changed) reaches the pod's Ready condition without waiting for a
// resync.
func TestReadinessGateConditionsReachReady(t *testing.T) {
	e := newTestEnv(t).start()
	const gate = corev1.PodConditionType("example.com/lb")
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	e.send(podtypes.ADD, pod)
	ready := func() *corev1.PodCondition {
		info, _ := e.agent.Pod(pod.UID)
		if i := slices.IndexFunc(info.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady }); i >= 0 {
			return &info.Status.Conditions[i]
		}
		return nil
	}
	e.eventually("the containers are ready, the pod is not", func() bool {
		c := ready()
		return e.phase(pod.UID) == corev1.PodRunning && c != nil && c.Reason == status.ReasonReadinessGatesNotReady
	})

	for _, s := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse} {
		set := pod.DeepCopy()
		set.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: s}}
		e.send(podtypes.RECONCILE, set)
		e.eventually("Ready follows the gate to "+string(s), func() bool {
			c := ready()
			return c != nil && c.Status == s
		})
	}
}
