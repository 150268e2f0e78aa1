package agent

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// withHostPort gives the pod's first container a host port.
func withHostPort(pod *corev1.Pod, port int32, ip string) *corev1.Pod {
	pod.Spec.Containers[0].Ports = append(pod.Spec.Containers[0].Ports,
		corev1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: corev1.ProtocolTCP})
	return pod
}

// Through the agent: the later pod is held back, reported, never started;
// when the first is removed and has stopped, the later one starts.
func TestHostPortConflictHoldsTheLaterPodBack(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	first := withHostPort(staticPod("first", "busybox", corev1.RestartPolicyAlways), 8080, "")
	second := withHostPort(staticPod("second", "busybox", corev1.RestartPolicyAlways), 8080, "")
	e.send(podtypes.ADD, first)
	e.eventually("the first pod runs", func() bool { return e.phase(first.UID) == corev1.PodRunning })
	e.send(podtypes.ADD, second)
	e.eventually("the second pod is reported held back", func() bool {
		info, ok := e.agent.Pod(second.UID)
		return ok && info.WorkerPhase == "refused" && info.Status.Reason == admission.ReasonHostPortConflict
	})
	info, _ := e.agent.Pod(second.UID)
	if msg := info.Status.Message; !strings.Contains(msg, "8080/TCP") || !strings.Contains(msg, "default/first-node-1") || info.Status.Phase != corev1.PodPending {
		t.Errorf("status = %s %q, want Pending naming the port and the first pod", info.Status.Phase, msg)
	}
	// Several housekeeping periods: it stays held back, and never ran.
	time.Sleep(5 * 20 * time.Millisecond) // housekeeping periods
	if len(e.rt.syncCalls(second.UID)) != 0 || e.rt.has(second.UID) {
		t.Fatal("the held-back pod was synced")
	}
	if pods := e.agent.Pods(); len(pods) != 2 {
		t.Errorf("Pods() lists %d pods, want both", len(pods))
	}

	e.send(podtypes.REMOVE, first)
	e.eventually("the second pod runs", func() bool { return e.phase(second.UID) == corev1.PodRunning })
	if e.rt.has(first.UID) {
		t.Error("the second pod started while the first still had its sandbox")
	}
	if k := kinds(e, second.UID); k["error"] != 1 {
		t.Errorf("timeline of the second pod %v: want one entry of its refusal", e.agent.Timeline(second.UID))
	}
}

// A held-back pod runs as soon as the holder of its port has stopped, not
// at the next housekeeping (here an hour away).
func TestHeldBackPodRunsOnceTheHolderStopped(t *testing.T) {
	e := newTestEnv(t)
	e.housekeeping = time.Hour
	e.ready.Store(true)
	e.start()
	first := withHostPort(staticPod("first", "busybox", corev1.RestartPolicyAlways), 8080, "")
	second := withHostPort(staticPod("second", "busybox", corev1.RestartPolicyAlways), 8080, "")
	e.send(podtypes.ADD, first)
	e.eventually("the first pod runs", func() bool { return e.phase(first.UID) == corev1.PodRunning })
	e.send(podtypes.ADD, second)
	e.eventually("the second pod is held back", func() bool { return e.workerPhase(second.UID) == "refused" })
	e.send(podtypes.REMOVE, first)
	e.eventually("the second pod runs", func() bool { return e.phase(second.UID) == corev1.PodRunning })
}

// A held-back pod its source drops is forgotten, status and all.
func TestHeldBackPodRemovedIsForgotten(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	first := withHostPort(staticPod("first", "busybox", corev1.RestartPolicyAlways), 8080, "")
	second := withHostPort(staticPod("second", "busybox", corev1.RestartPolicyAlways), 8080, "")
	e.send(podtypes.ADD, first, second)
	e.eventually("the second pod is held back", func() bool { return e.workerPhase(second.UID) == "refused" })
	e.send(podtypes.REMOVE, second)
	e.eventually("the second pod is forgotten", func() bool {
		_, ok := e.agent.Pod(second.UID)
		return !ok
	})
	if len(e.rt.killCalls()) != 0 {
		t.Errorf("kill calls %v, want none: neither pod stopped", e.rt.killCalls())
	}
}

// A held-back pod whose deletion is requested is forgotten: it never ran,
// so there is nothing to kill.
func TestHeldBackPodDeletedIsForgotten(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	first := withHostPort(staticPod("first", "busybox", corev1.RestartPolicyAlways), 8080, "")
	second := withHostPort(staticPod("second", "busybox", corev1.RestartPolicyAlways), 8080, "")
	e.send(podtypes.ADD, first, second)
	e.eventually("the second pod is held back", func() bool { return e.workerPhase(second.UID) == "refused" })
	deleted := second.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	e.send(podtypes.UPDATE, deleted)
	e.eventually("the second pod is forgotten", func() bool {
		_, ok := e.agent.Pod(second.UID)
		return !ok
	})
	if len(e.rt.killCalls()) != 0 || len(e.rt.syncCalls(second.UID)) != 0 {
		t.Errorf("kill calls %v, syncs of the held-back pod %v; want none", e.rt.killCalls(), e.rt.syncCalls(second.UID))
	}
}
