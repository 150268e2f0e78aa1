package eviction

import (
	"k8s.io/component-base/metrics"
)

// managerMetrics are the manager's. kubelet_evictions is the kubelet's
// counter under its name, for the KubeNodeEviction alert;
// nodeagent_evictions_total counts the same and stays for what reads it.
type managerMetrics struct {
	evictions        *metrics.CounterVec
	kubeletEvictions *metrics.CounterVec
	notifications    *metrics.Counter
}

func newMetrics(reg metrics.KubeRegistry) (*managerMetrics, error) {
	m := &managerMetrics{
		evictions: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Name: "evictions_total",
			Help:           "Pods evicted, by the eviction signal whose threshold was met.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"eviction_signal"}),
		kubeletEvictions: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "evictions",
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
	for _, c := range []metrics.Registerable{m.evictions, m.kubeletEvictions, m.notifications} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// evicted counts a pod evicted for signal.
func (m *managerMetrics) evicted(signal string) {
	m.evictions.WithLabelValues(signal).Inc()
	m.kubeletEvictions.WithLabelValues(signal).Inc()
}
