package objectcache

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func TestMetrics(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	mx, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the metrics twice on one registry succeeded")
	}
	clk := newClock()
	api := newFakeAPI(configMap("a", "1", "v1"), immutableConfigMap("frozen", "1", "v1"), secret("s", "1", "v1"))
	cms := startWatching(t, ConfigMaps(), api, clk, WatchingOptions{Metrics: mx})
	secrets, err := NewCaching(Secrets(), CachingOptions{Client: api, Clock: clk, Metrics: mx})
	if err != nil {
		t.Fatal(err)
	}

	pod := podWithConfigMaps("p", "a", "frozen")
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "s"}}
	cms.RegisterPod(pod)
	secrets.RegisterPod(pod)
	w := api.watcher(t, "configmaps/a", 1) // a has synced: reading it is a hit
	mustGet(t, cms.Get, "a")
	mustGet(t, cms.Get, "frozen") // synced once the list returned: a hit too
	mustGet(t, secrets.Get, "s")  // a miss: read from the apiserver
	mustGet(t, secrets.Get, "s")  // a hit

	// An update written 1.2s ago (by its managedFields time) arrives.
	written := metav1.NewTime(clk.Now().Add(-1200 * time.Millisecond))
	updated := configMap("a", "2", "v2")
	updated.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &written}}
	w.Modify(updated)
	eventually(t, func() bool {
		got, err := cms.Get(t.Context(), ns, "a")
		return err == nil && got.ResourceVersion == "2"
	}, "the update")

	want := `
# HELP nodeagent_objectcache_active_watches [ALPHA] Watches a watching manager holds open on the apiserver, one per referenced mutable object.
# TYPE nodeagent_objectcache_active_watches gauge
nodeagent_objectcache_active_watches{kind="configmaps"} 1
nodeagent_objectcache_active_watches{kind="secrets"} 0
# HELP nodeagent_objectcache_cache_misses_total [ALPHA] Gets that had to read the apiserver, or wait for a watch to sync.
# TYPE nodeagent_objectcache_cache_misses_total counter
nodeagent_objectcache_cache_misses_total{kind="configmaps"} 0
nodeagent_objectcache_cache_misses_total{kind="secrets"} 1
`
	names := []string{"nodeagent_objectcache_active_watches", "nodeagent_objectcache_cache_misses_total"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	delays, err := testutil.GetHistogramVecFromGatherer(reg, "nodeagent_objectcache_propagation_delay_seconds", map[string]string{"kind": "configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	if n, sum := delays.GetAggregatedSampleCount(), delays.GetAggregatedSampleSum(); n != 1 || sum != 1.2 {
		t.Errorf("propagation delays: %d observed, sum %vs; want 1, 1.2s", n, sum)
	}
	// Gets and hits depend on how many polls "eventually" made; count the
	// ones before it exactly through the relation gets = hits + misses.
	got, err := testutil.GetCounterValuesFromGatherer(reg, "nodeagent_objectcache_gets_total", map[string]string{}, "kind")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := testutil.GetCounterValuesFromGatherer(reg, "nodeagent_objectcache_cache_hits_total", map[string]string{}, "kind")
	if err != nil {
		t.Fatal(err)
	}
	if got["secrets"] != 2 || hits["secrets"] != 1 || got["configmaps"] < 3 || hits["configmaps"] != got["configmaps"] {
		t.Errorf("gets %v, hits %v; want 2 and 1 secret gets and hits, all (3+) configmap gets hits", got, hits)
	}
}
