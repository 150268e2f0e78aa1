package app

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// client-go's REST client (rest_client_*) and workqueue (workqueue_*)
	// metrics, as the kube components get them: these packages install
	// component-base's adapters into client-go's process-wide hooks.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// clientGoPrefixes are the metric families client-go's hooks record.
var clientGoPrefixes = []string{"rest_client_", "workqueue_"}

// servedMetrics is what /metrics serves, on --serve-address and on the
// node API: the agent's registry, and client-go's metrics. client-go's
// hooks are set once per process (tools/metrics.Register,
// workqueue.SetProvider), and component-base's adapters register their
// metrics in its global registry, so they are gathered from there, only
// their families: that registry's process and Go collectors are the
// agent's registry's already.
func servedMetrics(reg metrics.KubeRegistry) prometheus.Gatherers {
	return prometheus.Gatherers{reg, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := legacyregistry.DefaultGatherer.Gather()
		return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool {
			return !slices.ContainsFunc(clientGoPrefixes, func(p string) bool { return strings.HasPrefix(mf.GetName(), p) })
		}), err
	})}
}
