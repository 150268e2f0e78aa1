package objectcache

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"
)

const metricsSubsystem = "nodeagent_objectcache"

// Metrics are the managers' metrics, labelled by kind ("configmaps",
// "secrets"); one Metrics serves every manager of a node. A manager given
// no Metrics, or one whose metrics were never registered, records nothing.
type Metrics struct {
	activeWatches *metrics.GaugeVec
	gets          *metrics.CounterVec
	hits          *metrics.CounterVec
	misses        *metrics.CounterVec
	propagation   *metrics.HistogramVec
}

// NewMetrics creates the metrics and registers them on reg. A nil reg
// leaves them unregistered (and inert). Nothing is registered globally.
func NewMetrics(reg metrics.KubeRegistry) (*Metrics, error) {
	kind := []string{"kind"}
	m := &Metrics{
		activeWatches: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem:      metricsSubsystem,
			Name:           "active_watches",
			Help:           "Watches a watching manager holds open on the apiserver, one per referenced mutable object.",
			StabilityLevel: metrics.ALPHA,
		}, kind),
		gets: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "gets_total",
			Help:           "Get calls, whatever their outcome.",
			StabilityLevel: metrics.ALPHA,
		}, kind),
		hits: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "cache_hits_total",
			Help:           "Gets answered from the cache: a fresh TTL entry, or a synced watch.",
			StabilityLevel: metrics.ALPHA,
		}, kind),
		misses: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "cache_misses_total",
			Help:           "Gets that had to read the apiserver, or wait for a watch to sync.",
			StabilityLevel: metrics.ALPHA,
		}, kind),
		propagation: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem: metricsSubsystem,
			Name:      "propagation_delay_seconds",
			Help: "From an object's last write (its newest managedFields time, one-second resolution) to the " +
				"manager holding that version; an upper bound, sensitive to clock skew.",
			Buckets:        []float64{0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10, 30, 60, 120, 300, 600},
			StabilityLevel: metrics.ALPHA,
		}, kind),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.activeWatches, m.gets, m.hits, m.misses, m.propagation} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// kindMetrics are one kind's series, looked up once so that the Get hot
// path does no label hashing.
type kindMetrics struct {
	activeWatches metrics.GaugeMetric
	gets          metrics.CounterMetric
	hits          metrics.CounterMetric
	misses        metrics.CounterMetric
	propagation   metrics.ObserverMetric
}

func (m *Metrics) forKind(kind string) kindMetrics {
	if m == nil {
		m, _ = NewMetrics(nil) // unregistered: every series is a no-op
	}
	return kindMetrics{
		activeWatches: m.activeWatches.WithLabelValues(kind),
		gets:          m.gets.WithLabelValues(kind),
		hits:          m.hits.WithLabelValues(kind),
		misses:        m.misses.WithLabelValues(kind),
		propagation:   m.propagation.WithLabelValues(kind),
	}
}

// observePropagation records how long after its last write the manager
// came to hold obj. Objects with no write time (no managedFields and no
// creation time) are not observed.
func (k kindMetrics) observePropagation(obj metav1.Object, now time.Time) {
	written := lastWrite(obj)
	if written.IsZero() {
		return
	}
	k.propagation.Observe(max(now.Sub(written), 0).Seconds())
}

// lastWrite is the newest time the apiserver recorded for a write to obj.
// The apiserver stamps managedFields entries at second resolution.
func lastWrite(obj metav1.Object) time.Time {
	t := obj.GetCreationTimestamp().Time
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}
