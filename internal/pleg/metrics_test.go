package pleg

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// The kubelet's PLEG metrics follow the relists: the running pods and the
// containers by state as the last successful relist saw them, when it
// began, and a duration per relist and an interval between them, failed
// relists included.
func TestPLEGMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	rt := &fakeRuntime{}
	rt.set(
		pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateRunning), ctr("c2", runtime.ContainerStateExited)),
		pod("u2", sb("s2", runtime.SandboxNotReady), ctr("c3", runtime.ContainerStateCreated)),
	)
	h := startWith(t, Options{Runtime: rt, Registry: reg})
	counts := func(pods, created, running, exited int) string {
		return fmt.Sprintf(`
# HELP kubelet_running_containers [ALPHA] Containers the runtime holds, by state (created, running, exited, unknown), as the last successful relist saw them.
# TYPE kubelet_running_containers gauge
kubelet_running_containers{container_state="created"} %d
kubelet_running_containers{container_state="exited"} %d
kubelet_running_containers{container_state="running"} %d
kubelet_running_containers{container_state="unknown"} 0
# HELP kubelet_running_pods [ALPHA] Pods with a running sandbox, as the last successful relist saw them.
# TYPE kubelet_running_pods gauge
kubelet_running_pods %d
`, created, exited, running, pods)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counts(1, 1, 1, 1)), "kubelet_running_pods", "kubelet_running_containers"); err != nil {
		t.Errorf("after the first relist: %v", err)
	}
	h.assertRelists(reg, 1, 0)

	rt.set(
		pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", runtime.ContainerStateExited), ctr("c2", runtime.ContainerStateExited)),
		pod("u2", sb("s2", runtime.SandboxReady), ctr("c3", runtime.ContainerStateRunning)),
	)
	h.tick()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counts(2, 0, 1, 2)), "kubelet_running_pods", "kubelet_running_containers"); err != nil {
		t.Errorf("after the second relist: %v", err)
	}
	h.assertRelists(reg, 2, 1)

	// A failed relist counts as a relist, and its interval is from the
	// last successful one; what it could not see is left as it was.
	rt.mu.Lock()
	rt.listErr = errors.New("socket gone")
	rt.mu.Unlock()
	h.tick()
	h.tick()
	h.assertRelists(reg, 4, 3)
	iv, err := testutil.GetHistogramVecFromGatherer(reg, "kubelet_pleg_relist_interval_seconds", nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1 s, 1 s, then 2 s: the second failed relist is two seconds after
	// the last success.
	if got := iv.GetAggregatedSampleSum(); got != 4 {
		t.Errorf("sum of the relist intervals = %v s, want 4", got)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counts(2, 0, 1, 2)), "kubelet_running_pods", "kubelet_running_containers"); err != nil {
		t.Errorf("after failed relists: %v", err)
	}
}

// assertRelists checks the counts of relist durations and intervals
// observed, and that the last seen time is the last successful relist's.
func (h *harness) assertRelists(reg metrics.Gatherer, relists, intervals uint64) {
	h.t.Helper()
	for name, want := range map[string]uint64{"kubelet_pleg_relist_duration_seconds": relists, "kubelet_pleg_relist_interval_seconds": intervals} {
		v, err := testutil.GetHistogramVecFromGatherer(reg, name, nil)
		if err != nil && want > 0 {
			h.t.Fatal(err)
		}
		if got := v.GetAggregatedSampleCount(); got != want {
			h.t.Errorf("%s: %d observations, want %d", name, got, want)
		}
	}
	h.p.mu.Lock()
	last := h.p.lastRelist
	h.p.mu.Unlock()
	got, err := testutil.GetGaugeMetricValue(h.p.metrics.lastSeen)
	if err != nil {
		h.t.Fatal(err)
	}
	if got != float64(last.Unix()) {
		h.t.Errorf("kubelet_pleg_last_seen_seconds = %v, want %d (the last successful relist)", got, last.Unix())
	}
}

// BenchmarkCounted is the metrics' cost of one relist of 100 pods of 3
// containers.
func BenchmarkCounted(b *testing.B) {
	m, err := newMetrics(metrics.NewKubeRegistry())
	if err != nil {
		b.Fatal(err)
	}
	var pods []*runtime.Pod
	for i := range 100 {
		pods = append(pods, pod(fmt.Sprintf("u%d", i), sb(fmt.Sprintf("s%d", i), runtime.SandboxReady),
			ctr(fmt.Sprintf("a%d", i), runtime.ContainerStateRunning), ctr(fmt.Sprintf("b%d", i), runtime.ContainerStateExited), ctr(fmt.Sprintf("c%d", i), runtime.ContainerStateRunning)))
	}
	s := snapshotOf(pods)
	b.ReportAllocs()
	for b.Loop() {
		m.counted(s)
	}
}
