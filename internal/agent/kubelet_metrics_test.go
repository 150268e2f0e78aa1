package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Each SyncPod is timed under its update type; the sync that first
// reports the pod Running records the time since the pod was first seen,
// and later ones do not.
func TestKubeletPodMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	m, err := newMetrics(reg, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	vols, err := volumes.New(volumes.Options{RootDir: root})
	if err != nil {
		t.Fatal(err)
	}
	cache := pleg.NewCache()
	cache.UpdateTime(time.Now())
	clk := testingclock.NewFakeClock(time.Now())
	s := &syncer{
		rt: newFakeRuntime(root), vols: vols, cache: cache, statuses: status.NewStore(), timeline: timeline.New(0),
		desired: func(types.UID) bool { return true }, finished: func(*corev1.Pod) {}, clock: clk,
		log: testr.New(t), pods: map[types.UID]*podRecord{}, deadlines: newDeadlines(), evictions: newEvictions(),
		metrics: m.kubelet,
	}
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Annotations[podtypes.ConfigFirstSeenAnnotationKey] = clk.Now().Add(-3 * time.Second).UTC().Format(time.RFC3339Nano)

	if _, err := s.SyncPod(context.Background(), podworkers.Create, pod); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	if st := s.statuses.Status(pod.UID); st == nil || st.Phase != corev1.PodRunning {
		t.Fatalf("status after the first sync: %+v, want Running", st)
	}
	clk.Step(time.Second)
	cache.UpdateTime(clk.Now()) // a relist after the first sync's actions
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.SyncPod(ctx, podworkers.Sync, pod); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}

	starts, err := testutil.GetHistogramVecFromGatherer(reg, "kubelet_pod_start_duration_seconds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, sum := starts.GetAggregatedSampleCount(), starts.GetAggregatedSampleSum(); n != 1 || sum != 3 {
		t.Errorf("kubelet_pod_start_duration_seconds: %d observations summing %v s, want one of 3 s", n, sum)
	}
	// A pod the apiserver already shows Running started under an earlier
	// run of the agent: its first sync by this one records no start.
	adopted := staticPod("adopted", "busybox", corev1.RestartPolicyAlways)
	adopted.Annotations[podtypes.ConfigFirstSeenAnnotationKey] = clk.Now().UTC().Format(time.RFC3339Nano)
	adopted.Status.Phase = corev1.PodRunning
	if _, err := s.SyncPod(ctx, podworkers.Create, adopted); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	if st := s.statuses.Status(adopted.UID); st == nil || st.Phase != corev1.PodRunning {
		t.Fatalf("status of the adopted pod: %+v, want Running", st)
	}
	if starts, err = testutil.GetHistogramVecFromGatherer(reg, "kubelet_pod_start_duration_seconds", nil); err != nil {
		t.Fatal(err)
	}
	if n := starts.GetAggregatedSampleCount(); n != 1 {
		t.Errorf("kubelet_pod_start_duration_seconds after an adopted pod's sync: %d observations, want still 1", n)
	}
	m.ObserveSync(podworkers.WorkTerminating, time.Second)
	m.ObserveSync(podworkers.WorkTerminated, time.Second)
	m.ObserveSync(podworkers.WorkSync, time.Second) // SyncPod's: the syncer has recorded it
	for op, want := range map[string]uint64{"create": 2, "sync": 1, "update": 0, "kill": 1, "terminated": 1} {
		h, err := testutil.GetHistogramVecFromGatherer(reg, "kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": op})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.GetAggregatedSampleCount(); got != want {
			t.Errorf("kubelet_pod_worker_duration_seconds{operation_type=%q}: %d observations, want %d", op, got, want)
		}
	}

	const nodeName = `
# HELP kubelet_node_name [ALPHA] The node's name; the value is always 1.
# TYPE kubelet_node_name gauge
kubelet_node_name{node="node-a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(nodeName), "kubelet_node_name"); err != nil {
		t.Error(err)
	}
}
