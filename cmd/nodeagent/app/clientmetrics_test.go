package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/testutil"
)

// /metrics holds client-go's metrics: a named work queue's and the REST
// clients' requests, beside the agent's own families, each once.
func TestServedMetricsHoldClientGosMetrics(t *testing.T) {
	reg, _, err := (&Options{RootDir: t.TempDir(), PodLogDir: t.TempDir(), GCPercent: 100}).setUp(logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "clientmetrics_test"})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")

	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37"}`))
	}))
	defer apiserver.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: apiserver.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(context.Background()); err != nil {
		t.Fatal(err)
	}

	served := servedMetrics(reg)
	adds, err := testutil.GetCounterValuesFromGatherer(served, "workqueue_adds_total", nil, "name")
	if err != nil {
		t.Fatal(err)
	}
	if adds["clientmetrics_test"] != 2 {
		t.Errorf("workqueue_adds_total = %v, want 2 for clientmetrics_test", adds)
	}
	codes, err := testutil.GetCounterValuesFromGatherer(served, "rest_client_requests_total", map[string]string{"method": "GET"}, "code")
	if err != nil {
		t.Fatal(err)
	}
	if codes["200"] < 1 {
		t.Errorf("rest_client_requests_total{method=GET} by code = %v, want a 200", codes)
	}
	mfs, err := served.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	seen := map[string]int{}
	for _, mf := range mfs {
		seen[mf.GetName()]++
	}
	if seen["go_goroutines"] != 1 || seen["process_cpu_seconds_total"] != 1 {
		t.Errorf("go_goroutines %d times, process_cpu_seconds_total %d times; want each once", seen["go_goroutines"], seen["process_cpu_seconds_total"])
	}
}
