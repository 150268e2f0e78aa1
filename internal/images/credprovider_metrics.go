package images

import (
	"time"

	"k8s.io/apiserver/pkg/util/configmetrics"
	"k8s.io/component-base/metrics"
)

// pluginMetrics are the kubelet's credential provider metrics, under its
// names: each plugin run's duration and failures by plugin_name, and the
// config's hash.
type pluginMetrics struct {
	duration *metrics.HistogramVec
	errors   *metrics.CounterVec
}

// newPluginMetrics registers on reg, if not nil; unregistered,
// component-base makes the metrics inert.
func newPluginMetrics(reg metrics.KubeRegistry, configHash string) (*pluginMetrics, error) {
	m := &pluginMetrics{
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "credential_provider_plugin_duration",
			Help:           "Duration in seconds of a credential provider plugin's run, by plugin.",
			Buckets:        metrics.DefBuckets,
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin_name"}),
		errors: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "kubelet", Name: "credential_provider_plugin_errors_total",
			Help:           "Credential provider plugin runs that failed (killed at the timeout, a non-zero exit, an answer over the size bound), by plugin.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin_name"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []metrics.Registerable{m.duration, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	hashes := configmetrics.NewAtomicHashProvider()
	hashes.SetHashes(configHash)
	info := metrics.NewDesc("kubelet_credential_provider_config_info",
		"The credential provider config the agent started with, its hash (sha256 of its files) as a label.",
		[]string{"hash"}, nil, metrics.ALPHA, "")
	if err := reg.CustomRegister(configmetrics.NewConfigInfoCustomCollector(info, hashes)); err != nil {
		return nil, err
	}
	return m, nil
}

// observeRun records one plugin run.
func (m *pluginMetrics) observeRun(plugin string, took time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(plugin).Observe(took.Seconds())
	if failed {
		m.errors.WithLabelValues(plugin).Inc()
	}
}
