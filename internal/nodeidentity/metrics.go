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

// servingMetrics are what the certificate manager of the serving
// certificate records.
type servingMetrics struct {
	renewFailures *metrics.Counter
	rotationAge   *metrics.Histogram
	expiry        metrics.GaugeFunc
}

// newServingMetrics are the serving certificate's counterparts of the
// client certificate's metrics, and how long a certificate had lived when
// it was replaced (the kubelet's
// certificate_manager_server_rotation_seconds). current is read only once
// they are registered.
func newServingMetrics(current func() *tls.Certificate) servingMetrics {
	m := servingMetrics{
		renewFailures: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "node_identity", Name: "serving_certificate_renewal_failures_total",
			Help:           "Attempts to obtain or renew the node API's serving certificate that failed (a CSR not approved in time counts).",
			StabilityLevel: metrics.ALPHA,
		}),
		rotationAge: metrics.NewHistogram(&metrics.HistogramOpts{
			Namespace: "nodeagent", Subsystem: "node_identity", Name: "serving_certificate_rotation_seconds",
			Help: "How long the node API's previous serving certificate had been valid when a new one replaced it.",
			// A minute to four years.
			Buckets:        []float64{60, 3600, 4 * 3600, 86400, 7 * 86400, 30 * 86400, 90 * 86400, 180 * 86400, 365 * 86400, 4 * 365 * 86400},
			StabilityLevel: metrics.ALPHA,
		}),
	}
	m.expiry = metrics.NewGaugeFunc(&metrics.GaugeOpts{
		Namespace: "nodeagent", Subsystem: "node_identity", Name: "serving_certificate_expiration_timestamp_seconds",
		Help:           "When the node API's serving certificate expires, in seconds since the epoch; 0 without a valid certificate.",
		StabilityLevel: metrics.ALPHA,
	}, func() float64 {
		if c := current(); c != nil && c.Leaf != nil {
			return float64(c.Leaf.NotAfter.Unix())
		}
		return 0
	})
	return m
}

// register registers the metrics on reg, if not nil.
func (m servingMetrics) register(reg metrics.KubeRegistry) error {
	if reg == nil {
		return nil
	}
	if err := reg.Register(m.renewFailures); err != nil {
		return fmt.Errorf("serving certificate metrics: %w", err)
	}
	if err := reg.Register(m.rotationAge); err != nil {
		return fmt.Errorf("serving certificate metrics: %w", err)
	}
	if err := reg.Registerer().Register(m.expiry); err != nil {
		return fmt.Errorf("serving certificate metrics: %w", err)
	}
	return nil
}
