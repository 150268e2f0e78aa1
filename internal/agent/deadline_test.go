package agent

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
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

// A pod the apiserver says started longer ago than its deadline (one this
// agent first sees after a restart) fails at its first sync, starting
// nothing.
func TestActiveDeadlinePassedBeforeTheFirstSync(t *testing.T) {
	root := t.TempDir()
	vols, err := volumes.New(volumes.Options{RootDir: root})
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(root)
	cache := pleg.NewCache()
	cache.UpdateTime(time.Now())
	s := &syncer{
		rt: rt, vols: vols, cache: cache, statuses: status.NewStore(), timeline: timeline.New(0),
		desired: func(types.UID) bool { return true }, finished: func(*corev1.Pod) {}, clock: clock.RealClock{},
		log: testr.New(t), pods: map[types.UID]*podRecord{}, deadlines: newDeadlines(),
	}
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	started := metav1.NewTime(time.Now().Add(-time.Hour))
	pod.Status.StartTime = &started

	terminal, err := s.SyncPod(context.Background(), podworkers.Create, pod)
	if err != nil || !terminal {
		t.Fatalf("SyncPod = %v, %v; want terminal", terminal, err)
	}
	if calls := rt.syncCalls(pod.UID); len(calls) != 0 {
		t.Errorf("the runtime was asked to sync the pod %d times, want none", len(calls))
	}
	st := s.statuses.Status(pod.UID)
	if st == nil || st.Phase != corev1.PodFailed || st.Reason != status.ReasonDeadlineExceeded || !st.StartTime.Equal(&started) {
		t.Errorf("status %+v, want Failed with DeadlineExceeded and the apiserver's start time", st)
	}
}
