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

// The values of the result label, as the kubelet gives them.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
	resultUnknown    = "unknown"
)

func newProbeMetrics(reg metrics.KubeRegistry) (*probeMetrics, error) {
	pm := &probeMetrics{
		total: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "prober", Name: "probe_total",
			Help:           "Cumulative number of liveness, readiness or startup probes of a container, by result.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"probe_type", "result", "container", "pod", "namespace"}),
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

// series names one probe's series: the kind, container, pod, namespace.
type series [4]string

func seriesOf(w *worker) series {
	return series{w.kind.String(), w.target.container, w.pod, w.namespace}
}

func (pm *probeMetrics) observe(w *worker, r Result, d time.Duration) {
	result := resultUnknown
	switch r {
	case Success:
		result = resultSuccessful
	case Failure:
		result = resultFailed
	}
	pm.total.WithLabelValues(w.kind.String(), result, w.target.container, w.pod, w.namespace).Inc()
	pm.duration.WithLabelValues(w.kind.String(), w.target.container, w.pod, w.namespace).Observe(d.Seconds())
}

// forget drops the series of a pod that is gone, so that the metrics do
// not grow with every pod the node ever ran. They outlive the container's
// instances, as the kubelet's do.
func (pm *probeMetrics) forget(s series) {
	if !pm.total.IsCreated() {
		return // never registered: nothing to drop, and deleting would panic
	}
	for _, result := range []string{resultSuccessful, resultFailed, resultUnknown} {
		pm.total.DeleteLabelValues(s[0], result, s[1], s[2], s[3])
	}
	pm.duration.DeleteLabelValues(s[0], s[1], s[2], s[3])
}
