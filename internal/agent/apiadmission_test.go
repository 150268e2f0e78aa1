package agent

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// apiPod is a pod bound to node-1 through the apiserver, asking for cpu.
func apiPod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("api-" + name)},
		Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{{
			Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func TestAPIPodsAreAdmittedAgainstTheNode(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10"),
	}}}
	known := make(chan struct{})
	var getter mirror.NodeGetter = mirror.NodeGetterFunc(func(context.Context) (*corev1.Node, error) {
		select {
		case <-known:
			return node, nil
		default:
			return nil, context.DeadlineExceeded
		}
	})
	e.beforeRun = func(a *Agent) { a.Connected(getter) }
	e.start()

	first := apiPod("first", "1500m")
	e.send(podtypes.ADD, first)
	// A status change of the waiting pod does not index it: housekeeping
	// would start it, unadmitted.
	e.send(podtypes.RECONCILE, first)
	time.Sleep(5 * 20 * time.Millisecond) // housekeeping periods
	if _, indexed := e.agent.Pod(first.UID); indexed || len(e.rt.syncCalls(first.UID)) != 0 {
		t.Fatal("a pod waiting for the Node was indexed or synced")
	}
	close(known)
	e.eventually("the first pod runs once the Node is known", func() bool { return e.phase(first.UID) == corev1.PodRunning })

	big := apiPod("big", "1")
	e.send(podtypes.ADD, big)
	e.eventually("the pod that does not fit is Failed", func() bool { return e.phase(big.UID) == corev1.PodFailed })
	info, _ := e.agent.Pod(big.UID)
	if info.Status.Reason != "OutOfcpu" || info.Status.Message == "" {
		t.Errorf("status = %s %q, want OutOfcpu with a message", info.Status.Reason, info.Status.Message)
	}
	if len(e.rt.syncCalls(big.UID)) != 0 {
		t.Error("a refused pod was synced")
	}
	// Once refused, an update does not run it.
	e.send(podtypes.UPDATE, big)
	small := apiPod("small", "400m")
	e.send(podtypes.ADD, small)
	e.eventually("a pod that fits runs", func() bool { return e.phase(small.UID) == corev1.PodRunning })
	if len(e.rt.syncCalls(big.UID)) != 0 || e.phase(big.UID) != corev1.PodFailed {
		t.Error("the refused pod ran after an update")
	}
}
