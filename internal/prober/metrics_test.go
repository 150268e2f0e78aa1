package prober

import (
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func metricsWorker(pm *probeMetrics) *worker {
	return &worker{
		m: &Manager{metrics: pm}, uid: "uid-1", pod: "web", namespace: "default", kind: Readiness,
		target: target{container: "app", containerID: "c-1"},
	}
}

func TestProbeMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	pm, err := newProbeMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	w := metricsWorker(pm)
	pm.observe(w, Success, 2*time.Millisecond)
	pm.observe(w, Success, 3*time.Millisecond)
	pm.observe(w, Failure, time.Second)
	pm.observe(w, Unknown, time.Millisecond)

	want := `
# HELP prober_probe_total [ALPHA] Cumulative number of liveness, readiness or startup probes of a container, by result.
# TYPE prober_probe_total counter
prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Readiness",result="failed"} 1
prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Readiness",result="successful"} 2
prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Readiness",result="unknown"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "prober_probe_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GetHistogramMetricCount(pm.duration.WithLabelValues("Readiness", "app", "web", "default")); err != nil || n != 4 {
		t.Errorf("prober_probe_duration_seconds count %d (%v), want 4", n, err)
	}

	pm.forget(seriesOf(w))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), "prober_probe_total", "prober_probe_duration_seconds"); err != nil {
		t.Errorf("a forgotten pod's series remain: %v", err)
	}
}

func TestProbeMetricsUnregistered(t *testing.T) {
	pm, err := newProbeMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := metricsWorker(pm)
	pm.observe(w, Success, time.Millisecond) // inert, no panic
	pm.forget(seriesOf(w))
}

// BenchmarkObserve is the metrics' cost of one probe, the worker's
// series already looked up (its first probe pays for that).
func BenchmarkObserve(b *testing.B) {
	pm, err := newProbeMetrics(metrics.NewKubeRegistry())
	if err != nil {
		b.Fatal(err)
	}
	w := metricsWorker(pm)
	pm.observe(w, Success, time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		pm.observe(w, Success, time.Millisecond)
	}
}
