package agent

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// An API pod's resize that does not fit beside the other pods is
// Deferred, and the pod runs on with what it had; it is given once
// another pod stops. One that could never fit is Infeasible.
func TestResizeDeferredThenGiven(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10"),
	}}}
	var getter mirror.NodeGetter = mirror.NodeGetterFunc(func(context.Context) (*corev1.Node, error) { return node, nil })
	e.beforeRun = func(a *Agent) { a.Connected(getter) }
	e.start()

	first, second := apiPod("first", "1500m"), apiPod("second", "400m")
	e.send(podtypes.ADD, first, second)
	e.eventually("both pods run", func() bool {
		return e.phase(first.UID) == corev1.PodRunning && e.phase(second.UID) == corev1.PodRunning
	})

	resized := apiPod("second", "1")
	resized.Generation = 2
	e.send(podtypes.UPDATE, resized)
	e.eventually("the resize is Deferred", func() bool { return resizeReason(e, second.UID) == "Deferred" })
	if got := lastCPU(e, second.UID); got != "400m" {
		t.Errorf("the pod runs with cpu %s while its resize waits, want 400m as allocated", got)
	}

	e.send(podtypes.REMOVE, first)
	e.eventually("the resize is given once the first pod stopped", func() bool {
		return resizeReason(e, second.UID) == "" && lastCPU(e, second.UID) == "1"
	})

	huge := apiPod("second", "3")
	huge.Generation = 3
	e.send(podtypes.UPDATE, huge)
	e.eventually("a resize beyond the node is Infeasible", func() bool { return resizeReason(e, second.UID) == "Infeasible" })
	if got := lastCPU(e, second.UID); got != "1" {
		t.Errorf("the pod runs with cpu %s while its resize is infeasible, want 1 as allocated", got)
	}
}

// resizeReason is the reason of the pod's PodResizePending condition, ""
// without one.
func resizeReason(e *testEnv, uid types.UID) string {
	info, _ := e.agent.Pod(uid)
	for _, c := range info.Status.Conditions {
		if c.Type == corev1.PodResizePending {
			return c.Reason
		}
	}
	return ""
}

func lastCPU(e *testEnv, uid types.UID) string {
	calls := e.rt.syncCalls(uid)
	if len(calls) == 0 {
		return ""
	}
	return calls[len(calls)-1].CPU
}
