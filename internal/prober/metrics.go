package prober

import (
	"time"

	"k8s.io/component-base/metrics"
)

// probeMetrics are the kubelet's prober metrics, under its names and
// labels. Without a registry they stay unregistered, and component-base
// makes them inert.
type probeMetrics struct {
	total    *metrics.CounterVec
	duration *metrics.HistogramVec
}

// The values of the result label, as the kubelet gives them, indexed by
// resultIndex.
var resultLabels = [...]string{"successful", "failed", "unknown"}

func resultIndex(r Result) int {
	switch r {
	case Success:
		return 0
	case Failure:
		return 1
	}
	return 2
}

func newProbeMetrics(reg metrics.KubeRegistry) (*probeMetrics, error) {
	pm := &probeMetrics{
		total: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "prober", Name: "probe_total",
			Help:           "Cumulative number of liveness, readiness or startup probes of a container, by result.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem: "prober", Name: "probe_duration_seconds",
			Help:           "Duration in seconds of a container's liveness, readiness or startup probe, whatever its result.",
			Buckets:        []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
			StabilityLevel: metrics.ALPHA,
		}, []string{"probe_type", "container", "pod", "namespace"}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{pm.total, pm.duration} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return pm, nil
}

// series names one probe's series: the kind, container, pod, namespace
// and pod UID.
type series [5]string

func seriesOf(w *worker) series {
	return series{w.kind.String(), w.target.container, w.pod, w.namespace, string(w.uid)}
}

// workerSeries are one worker's children of the vectors, looked up at
// its first probe of each result and kept: a probe then costs an
// increment and an observation, with no label lookup or allocation. Only
// the worker's goroutine touches them.
type workerSeries struct {
	total    [len(resultLabels)]metrics.CounterMetric
	duration metrics.ObserverMetric
}

func (pm *probeMetrics) observe(w *worker, r Result, d time.Duration) {
	s := &w.series
	i := resultIndex(r)
	if s.total[i] == nil {
		s.total[i] = pm.total.WithLabelValues(w.kind.String(), resultLabels[i], w.target.container, w.pod, w.namespace, string(w.uid))
	}
	if s.duration == nil {
		s.duration = pm.duration.WithLabelValues(w.kind.String(), w.target.container, w.pod, w.namespace)
	}
	s.total[i].Inc()
	s.duration.Observe(d.Seconds())
}

// forget drops the series of a pod that is gone, so that the metrics do
// not grow with every pod the node ever ran. They outlive the container's
// instances, as the kubelet's do.
func (pm *probeMetrics) forget(s series) {
	if !pm.total.IsCreated() {
		return // never registered: nothing to drop, and deleting would panic
	}
	for _, result := range resultLabels {
		pm.total.DeleteLabelValues(s[0], result, s[1], s[2], s[3], s[4])
	}
	pm.duration.DeleteLabelValues(s[0], s[1], s[2], s[3])
}
