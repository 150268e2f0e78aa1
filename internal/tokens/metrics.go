package tokens

import "k8s.io/component-base/metrics"

// Metrics count the token requests. Unregistered, component-base makes
// them inert.
type Metrics struct {
	requests   *metrics.CounterVec
	keptTokens *metrics.Counter
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		requests: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "tokens", Name: "requests_total",
			Help:           "Service account token requests sent to the apiserver, by result (ok, forbidden, invalid, error; lagging: refused while the apiserver had not yet seen the pod bound to the node, and asked again).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"result"}),
		keptTokens: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "tokens", Name: "cached_after_failure_total",
			Help:           "Failed refreshes after which the cached, still valid, token was handed out.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
}

// Register registers the metrics.
func (m *Metrics) Register(reg metrics.KubeRegistry) error {
	for _, c := range []metrics.Registerable{m.requests, m.keptTokens} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *Metrics) request(result string) { m.requests.WithLabelValues(result).Inc() }

func (m *Metrics) keptCached() { m.keptTokens.Inc() }
