package nodeidentity

import (
	"crypto/tls"
	"fmt"
	"math"
	"time"

	"k8s.io/client-go/util/certificate"
	"k8s.io/component-base/metrics"
)

// Each certificate has its metrics twice: under the agent's names, which
// the README documents, and under the kubelet's, which the
// KubeletClientCertificateExpiration, KubeletServerCertificateExpiration
// and renewal error alerts read.

// registerMetrics registers on reg (if not nil) the expiry of the
// certificate current returns, and returns the counter of failed renewals
// the certificate manager increments.
func registerMetrics(reg metrics.KubeRegistry, current func() *tls.Certificate) (certificate.Counter, error) {
	renewFailures := counters{metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "nodeagent", Subsystem: "node_identity", Name: "certificate_renewal_failures_total",
		Help:           "Attempts to renew the node's client certificate that failed.",
		StabilityLevel: metrics.ALPHA,
	}), metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "kubelet", Subsystem: "certificate_manager", Name: "client_expiration_renew_errors",
		Help:           "Attempts to renew the node's client certificate that failed.",
		StabilityLevel: metrics.ALPHA,
	})}
	ttl := ttlGauge("certificate_manager_client_ttl_seconds", "client certificate", current)
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
	for _, c := range renewFailures {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("node identity metrics: %w", err)
		}
	}
	for _, g := range []metrics.GaugeFunc{expiry, ttl} {
		if err := reg.Registerer().Register(g); err != nil {
			return nil, fmt.Errorf("node identity metrics: %w", err)
		}
	}
	return renewFailures, nil
}

// ttlGauge is the kubelet's gauge of a certificate's time to live: whole
// seconds until it expires (negative once it has), +Inf without one.
func ttlGauge(name, what string, current func() *tls.Certificate) metrics.GaugeFunc {
	return metrics.NewGaugeFunc(&metrics.GaugeOpts{
		Subsystem: "kubelet", Name: name,
		Help:           "Seconds until the node's " + what + " expires, negative once it has; +Inf without a valid certificate.",
		StabilityLevel: metrics.ALPHA,
	}, func() float64 {
		if c := current(); c != nil && c.Leaf != nil {
			return math.Trunc(time.Until(c.Leaf.NotAfter).Seconds())
		}
		return math.Inf(1)
	})
}

// counters count each event on every one of them: the certificate
// manager takes one counter.
type counters []*metrics.Counter

func (cs counters) Inc() {
	for _, c := range cs {
		c.Inc()
	}
}

// histograms observe each value on every one of them.
type histograms []*metrics.Histogram

func (hs histograms) Observe(v float64) {
	for _, h := range hs {
		h.Observe(v)
	}
}

// rotationBuckets are the kubelet's for the rotation age: a minute to four
// years.
var rotationBuckets = []float64{60, 3600, 4 * 3600, 86400, 7 * 86400, 30 * 86400, 90 * 86400, 180 * 86400, 365 * 86400, 4 * 365 * 86400}

// servingMetrics are what the certificate manager of the serving
// certificate records.
type servingMetrics struct {
	renewFailures counters
	rotationAge   histograms
	expiry, ttl   metrics.GaugeFunc
}

// newServingMetrics are the serving certificate's counterparts of the
// client certificate's metrics, and how long a certificate had lived when
// it was replaced (the kubelet's
// certificate_manager_server_rotation_seconds). current is read only once
// they are registered.
func newServingMetrics(current func() *tls.Certificate) servingMetrics {
	m := servingMetrics{
		renewFailures: counters{metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "node_identity", Name: "serving_certificate_renewal_failures_total",
			Help:           "Attempts to obtain or renew the node API's serving certificate that failed (a CSR not approved in time counts).",
			StabilityLevel: metrics.ALPHA,
		}), metrics.NewCounter(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "server_expiration_renew_errors",
			Help:           "Attempts to obtain or renew the node API's serving certificate that failed (a CSR not approved in time counts).",
			StabilityLevel: metrics.ALPHA,
		})},
		rotationAge: histograms{metrics.NewHistogram(&metrics.HistogramOpts{
			Namespace: "nodeagent", Subsystem: "node_identity", Name: "serving_certificate_rotation_seconds",
			Help:           "How long the node API's previous serving certificate had been valid when a new one replaced it.",
			Buckets:        rotationBuckets,
			StabilityLevel: metrics.ALPHA,
		}), metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "certificate_manager_server_rotation_seconds",
			Help:           "How long the node API's previous serving certificate had been valid when a new one replaced it.",
			Buckets:        rotationBuckets,
			StabilityLevel: metrics.ALPHA,
		})},
		ttl: ttlGauge("certificate_manager_server_ttl_seconds", "serving certificate (the node API's)", current),
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
	for _, c := range m.renewFailures {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("serving certificate metrics: %w", err)
		}
	}
	for _, h := range m.rotationAge {
		if err := reg.Register(h); err != nil {
			return fmt.Errorf("serving certificate metrics: %w", err)
		}
	}
	for _, g := range []metrics.GaugeFunc{m.expiry, m.ttl} {
		if err := reg.Registerer().Register(g); err != nil {
			return fmt.Errorf("serving certificate metrics: %w", err)
		}
	}
	return nil
}
