package keeper

import "k8s.io/component-base/metrics"

const metricsNamespace = "nodeagent"

// keeperMetrics are the writer's (transactions written, attempts that
// failed, pods changed but not written yet) and the pods restored at
// start. Without a registry they stay unregistered, and component-base
// makes them inert.
type keeperMetrics struct {
	writes   *metrics.Counter
	failures *metrics.Counter
	pending  *metrics.Gauge
	restored *metrics.Gauge
}

func newMetrics(reg metrics.KubeRegistry) (*keeperMetrics, error) {
	m := &keeperMetrics{
		restored: metrics.NewGauge(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Name: "checkpoint_restored_pods",
			Help:           "Static pods restored from the checkpoint at start, before their sources answered.",
			StabilityLevel: metrics.ALPHA,
		}),
		writes: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "checkpoint", Name: "writes_total",
			Help:           "Checkpoint transactions written; each holds every pod changed since the one before.",
			StabilityLevel: metrics.ALPHA,
		}),
		failures: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "checkpoint", Name: "write_failures_total",
			Help:           "Checkpoint writes that failed; each is retried with a back-off.",
			StabilityLevel: metrics.ALPHA,
		}),
		pending: metrics.NewGauge(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: "checkpoint", Name: "pending_changes",
			Help:           "Pods whose newest change the checkpoint has not written yet.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.restored, m.writes, m.failures, m.pending} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
