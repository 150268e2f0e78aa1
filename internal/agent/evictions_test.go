package agent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The eviction manager evicts through Evict: the pod is stopped with the
// grace period given, once however often it is asked, ends Failed with
// reason Evicted, the message and DisruptionTarget, and is no longer a
// candidate; Reclaimed says when what it held is released.
func TestEvictStopsThePodOnceWithItsGrace(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	other := staticPod("other", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod, other)
	e.eventually("the pods run", func() bool {
		return e.phase(pod.UID) == corev1.PodRunning && e.phase(other.UID) == corev1.PodRunning
	})
	if got := len(e.agent.Evictable()); got != 2 {
		t.Fatalf("%d evictable pods, want 2", got)
	}
	const msg = "The node was low on resource: memory. "
	if !e.agent.Evict(pod, msg, 1) {
		t.Fatal("Evict refused")
	}
	if e.agent.Evict(pod, "again", 0) {
		t.Error("a second Evict of the same pod was taken")
	}
	e.eventually("the pod is stopped", func() bool { return e.agent.Reclaimed(pod.UID) && !e.rt.has(pod.UID) })
	if g := e.rt.stopCalls()[0].Grace; g == nil || *g != 1 {
		t.Errorf("grace period = %v, want 1", g)
	}
	info, _ := e.agent.Pod(pod.UID)
	if st := info.Status; st.Phase != corev1.PodFailed || st.Reason != status.ReasonEvicted || st.Message != msg {
		t.Errorf("status %s %s %q, want Failed, Evicted, the message", st.Phase, st.Reason, st.Message)
	}
	disrupted := false
	for _, c := range info.Status.Conditions {
		disrupted = disrupted || c.Type == corev1.DisruptionTarget && c.Reason == corev1.PodReasonTerminationByKubelet
	}
	if !disrupted {
		t.Errorf("conditions %+v, want DisruptionTarget", info.Status.Conditions)
	}
	if ev := e.agent.Evictable(); len(ev) != 1 || ev[0].UID != other.UID {
		t.Errorf("evictable %v, want only the other pod", ev)
	}
	if e.agent.Reclaimed(other.UID) {
		t.Error("the other pod is said to be reclaimed")
	}
}
