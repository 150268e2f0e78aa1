package agent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// A pod active longer than its spec.activeDeadlineSeconds fails with the
// kubelet's reason and message, and what runs of it is stopped; a deadline
// set on a running pod (the apiserver lets it be set or lowered) counts
// from the pod's start. Both well before the periodic resync (a minute).
func TestActiveDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		// later: the deadline comes with an update of the running pod.
		later bool
	}{
		{"in the spec from the start", false},
		{"set on the running pod", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t).start()
			pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
			deadline := int64(1)
			if !tc.later {
				pod.Spec.ActiveDeadlineSeconds = &deadline
			}
			started := time.Now()
			e.send(podtypes.ADD, pod)
			e.eventually("the pod runs", func() bool { return len(e.rt.runningIDs(pod.UID)) == 1 })
			if tc.later {
				time.Sleep(1500 * time.Millisecond) // past the deadline it is about to get
				e.eventually("the pod still runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
				updated := pod.DeepCopy()
				updated.Spec.ActiveDeadlineSeconds = &deadline
				e.send(podtypes.UPDATE, updated)
			}
			e.eventually("the pod failed and stopped", func() bool {
				info, _ := e.agent.Pod(pod.UID)
				return info.Status.Phase == corev1.PodFailed && len(e.rt.runningIDs(pod.UID)) == 0
			})
			if took := time.Since(started); took > 4*time.Second {
				t.Errorf("the pod failed %v after its start, want about its deadline of 1s", took)
			}
			info, _ := e.agent.Pod(pod.UID)
			if info.Status.Reason != status.ReasonDeadlineExceeded || info.Status.Message != status.MessageDeadlineExceeded {
				t.Errorf("status reason %q message %q, want the kubelet's", info.Status.Reason, info.Status.Message)
			}
		})
	}
}
