package config

import (
	"time"

	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const metricsSubsystem = "nodeagent_config"

// Metrics are the config module's metrics. A nil *Metrics records nothing,
// and so does one whose metrics were never registered.
type Metrics struct {
	pickupLatency *metrics.Histogram
	refused       *metrics.CounterVec
	updates       *metrics.CounterVec
}

// NewMetrics creates the metrics and registers them on reg. A nil reg
// leaves them unregistered (and inert). Nothing is registered globally.
func NewMetrics(reg metrics.KubeRegistry) (*Metrics, error) {
	m := &Metrics{
		pickupLatency: metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem:      metricsSubsystem,
			Name:           "pickup_latency_seconds",
			Help:           "Time from a manifest file event to the emitted pod update.",
			Buckets:        []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
			StabilityLevel: metrics.ALPHA,
		}),
		refused: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "manifests_refused_total",
			Help:           "Manifests or pods refused, by source and reason.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"source", "reason"}),
		updates: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "updates_total",
			Help:           "Pod updates emitted by the merger, by source and operation.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"source", "op"}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.pickupLatency, m.refused, m.updates} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Metrics) observePickup(d time.Duration) {
	if m != nil {
		m.pickupLatency.Observe(d.Seconds())
	}
}

func (m *Metrics) countRefused(source podtypes.Source, reason manifest.Reason) {
	if m != nil {
		m.refused.WithLabelValues(string(source), string(reason)).Inc()
	}
}

func (m *Metrics) countUpdate(u podtypes.PodUpdate) {
	if m != nil {
		m.updates.WithLabelValues(string(u.Source), u.Op.String()).Inc()
	}
}
