package eviction

import (
	"k8s.io/component-base/metrics"
)

type managerMetrics struct {
	evictions     *metrics.CounterVec
	notifications *metrics.Counter
}

func newMetrics(reg metrics.KubeRegistry) (*managerMetrics, error) {
	m := &managerMetrics{
		evictions: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Name: "evictions_total",
			Help:           "Pods evicted, by the eviction signal whose threshold was met.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"eviction_signal"}),
		notifications: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Name: "eviction_memory_notifications_total",
			Help:           "Times the kernel said the pods' memory crossed the eviction threshold between polls.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []metrics.Registerable{m.evictions, m.notifications} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
