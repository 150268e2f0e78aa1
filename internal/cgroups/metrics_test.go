package cgroups

import (
	"context"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// Every cgroup made, written again or removed is timed under the
// kubelet's operation_type.
func TestCgroupOperationsAreTimed(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	m := newManager(Options{Root: "/nodeagent", FS: fakeV1(t)})
	var err error
	if m.metrics, err = newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if err := m.Setup(); err != nil { // kubepods, burstable, besteffort
		t.Fatal(err)
	}
	if err := m.EnsurePod(guaranteed); err != nil { // its cgroup
		t.Fatal(err)
	}
	if err := m.TrackPod(burstable1); err != nil { // the burstable shares written again
		t.Fatal(err)
	}
	small := testPod("g1", ctr("a", "200m", "64Mi", "200m", "64Mi"))
	if err := m.EnsurePod(small); err != nil { // its cgroup
		t.Fatal(err)
	}
	// Nothing grows: the limits are written once, after the containers.
	if err := m.ResizePod(small, testPod("g1", ctr("a", "100m", "32Mi", "100m", "32Mi")), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := m.RemovePod(context.Background(), burstable1.UID); err != nil { // one pod, wherever it was; the shares again
		t.Fatal(err)
	}
	for op, want := range map[string]uint64{"create": 5, "update": 3, "destroy": 1} {
		h, err := testutil.GetHistogramVecFromGatherer(reg, "kubelet_cgroup_manager_duration_seconds", map[string]string{"operation_type": op})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.GetAggregatedSampleCount(); got != want {
			t.Errorf("kubelet_cgroup_manager_duration_seconds{operation_type=%q}: %d observations, want %d", op, got, want)
		}
	}
}
