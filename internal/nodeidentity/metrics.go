package nodeidentity

import (
	"crypto/tls"
	"fmt"

	"k8s.io/component-base/metrics"
)

// registerMetrics registers on reg (if not nil) the expiry of the
// certificate current returns, and returns the counter of failed renewals
// the certificate manager increments.
func registerMetrics(reg metrics.KubeRegistry, current func() *tls.Certificate) (*metrics.Counter, error) {
	renewFailures := metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "nodeagent", Subsystem: "node_identity", Name: "certificate_renewal_failures_total",
		Help:           "Attempts to renew the node's client certificate that failed.",
		StabilityLevel: metrics.ALPHA,
	})
	expiry := metrics.NewGaugeFunc(&metrics.GaugeOpts{
		Namespace: "nodeagent", Subsystem: "node_identity", Name: "certificate_expiration_timestamp_seconds",
		Help:           "When the node's client certificate expires, in seconds since the epoch; 0 without a valid certificate.",
		StabilityLevel: metrics.ALPHA,
	}, func() float64 {
		if c := current(); c != nil && c.Leaf != nil {
			return float64(c.Leaf.NotAfter.Unix())
		}
		return 0
	})
	if reg == nil {
		return renewFailures, nil
	}
	if err := reg.Register(renewFailures); err != nil {
		return nil, fmt.Errorf("node identity metrics: %w", err)
	}
	if err := reg.Registerer().Register(expiry); err != nil {
		return nil, fmt.Errorf("node identity metrics: %w", err)
	}
	return renewFailures, nil
}
