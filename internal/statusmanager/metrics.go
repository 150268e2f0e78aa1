package statusmanager

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-base/metrics"
)

// Metrics count the status writes. Unregistered, component-base makes them
// inert.
type Metrics struct {
	writes   *metrics.CounterVec
	deletes  *metrics.CounterVec
	duration *metrics.Histogram
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		writes: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "status_manager", Name: "writes_total",
			Help:           "Pod status patches sent to the apiserver, by result (ok, conflict, not_found, error).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"result"}),
		deletes: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "status_manager", Name: "deletes_total",
			Help:           "Deletions of API pods that finished terminating, by result (ok, conflict, not_found, error).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"result"}),
		duration: metrics.NewHistogram(&metrics.HistogramOpts{
			Namespace: "nodeagent", Subsystem: "status_manager", Name: "write_duration_seconds",
			Help:           "Duration of the pod status patches.",
			Buckets:        []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
			StabilityLevel: metrics.ALPHA,
		}),
	}
}

// Register registers the metrics.
func (m *Metrics) Register(reg metrics.KubeRegistry) error {
	for _, c := range []metrics.Registerable{m.writes, m.deletes, m.duration} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *Metrics) observe(err error, took time.Duration) {
	m.writes.WithLabelValues(result(err)).Inc()
	m.duration.Observe(took.Seconds())
}

func (m *Metrics) observeDelete(err error) { m.deletes.WithLabelValues(result(err)).Inc() }

func result(err error) string {
	switch {
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsNotFound(err):
		return "not_found"
	case err != nil:
		return "error"
	}
	return "ok"
}
