package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// spec.activeDeadlineSeconds, set on a running pod through the apiserver
// (it may be set or lowered there): the agent sees the update, and once
// the pod has been active that long it fails with the kubelet's reason
// and message and its containers stop, within moments of the deadline,
// not at the periodic resync a minute later.
func TestBinaryActiveDeadline(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	ctx := context.Background()
	pods := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault)
	pod := h.apiPodSpec("deadline", shContainer("main", sleepForever))
	created := h.createAPIPod(pod)
	running := h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(created.UID))

	// Lowered from none to 5 s, as the upstream test does: the pod has run
	// a while already, and fails 5 s after its start.
	current, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	if _, err := pods.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	failed := h.waitAPIPod(pod.Name, "Failed with DeadlineExceeded", 30*time.Second, func(p *corev1.Pod) bool {
		return p != nil && p.Status.Phase == corev1.PodFailed
	})
	if failed.Status.Reason != "DeadlineExceeded" || failed.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("status reason %q message %q, want the kubelet's", failed.Status.Reason, failed.Status.Message)
	}
	start := running.Status.StartTime.Time
	if late := time.Since(start) - 5*time.Second; late > 10*time.Second {
		t.Errorf("failed %v after its deadline", late)
	}
	eventuallyTrue(t, "the pod's containers stopped", 40*time.Second, func() (bool, string) {
		n := len(h.containers("deadline", true))
		return n == 0, fmt.Sprintf("%d running containers", n)
	})
}
