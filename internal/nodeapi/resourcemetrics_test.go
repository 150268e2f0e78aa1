package nodeapi

import (
	"net/http"
	"strings"
	"testing"
)

func TestResourceMetrics(t *testing.T) {
	w := newWorld(t, nil)
	code, body := w.do("GET", "/metrics/resource", "alice-token")
	if code != http.StatusOK {
		t.Fatalf("/metrics/resource: %d %q", code, body)
	}
	for _, line := range []string{
		"node_cpu_usage_seconds_total 90 1700000001000",
		"node_memory_working_set_bytes 3.221225472e+09 1700000001000",
		`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 1.5 1700000000000`,
		`container_memory_working_set_bytes{container="side",namespace="default",pod="web"} 1.048576e+06 1700000000000`,
		`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 2 1700000000000`,
		`pod_memory_working_set_bytes{namespace="default",pod="web"} 2.097152e+06 1700000000000`,
		"resource_scrape_error 0",
		// From the pod's status, which names the instance measured.
		`container_start_time_seconds{container="app",namespace="default",pod="web"} 1.699999e+09`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("no line %q in:\n%s", line, body)
		}
	}
	// side's status is of an earlier instance: its start is not this one's.
	if strings.Contains(body, `container_start_time_seconds{container="side"`) {
		t.Errorf("a start time for side, whose status is of another instance:\n%s", body)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if last := w.rv.sars[len(w.rv.sars)-1]; last.Subresource != "metrics" {
		t.Errorf("authorized as nodes/%s, want nodes/metrics", last.Subresource)
	}
}
