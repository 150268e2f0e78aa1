package nodeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/component-base/metrics"
)

// authorizedAs asserts that bob, who may do nothing, is refused path
// with a 403 naming the nodes subresources want, and that those, in
// order, were reviewed (unless the answers were cached: paths of one
// subresource share them).
func (w *world) authorizedAs(path string, want ...string) {
	w.t.Helper()
	w.rv.mu.Lock()
	before := len(w.rv.sars)
	w.rv.mu.Unlock()
	if code, body := w.do("GET", path, "bob-token"); code != http.StatusForbidden || !strings.Contains(body, "["+strings.Join(want, " ")+"]") {
		w.t.Errorf("bob on %s: %d %q, want 403 naming %v", path, code, body, want)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	var got []string
	for _, a := range w.rv.sars[before:] {
		if a.Resource != "nodes" || a.Name != "node-1" || a.Verb != "get" {
			w.t.Errorf("%s: SubjectAccessReview of %+v", path, a)
		}
		got = append(got, a.Subresource)
	}
	if len(got) > 0 && strings.Join(got, " ") != strings.Join(want, " ") {
		w.t.Errorf("%s: bob reviewed as nodes/%v, want %v", path, got, want)
	}
}

func TestMetrics(t *testing.T) {
	w := newWorld(t, nil)
	agentMetric := metrics.NewCounter(&metrics.CounterOpts{Name: "agent_things_total", Help: "things", StabilityLevel: metrics.ALPHA})
	w.metrics.MustRegister(agentMetric)
	agentMetric.Add(3)
	probeMetric := metrics.NewCounter(&metrics.CounterOpts{Name: "probe_things_total", Help: "probes", StabilityLevel: metrics.ALPHA})
	w.probeMetrics.MustRegister(probeMetric)
	probeMetric.Inc()

	for _, c := range []struct{ path, has, hasNot string }{
		{"/metrics", "agent_things_total 3", "probe_things_total"},
		{"/metrics/probes", "probe_things_total 1", "agent_things_total"},
	} {
		code, body := w.do("GET", c.path, "alice-token")
		if code != http.StatusOK || !strings.Contains(body, c.has) || strings.Contains(body, c.hasNot) {
			t.Errorf("%s: %d, want 200 with %q and without %q:\n%s", c.path, code, c.has, c.hasNot, body)
		}
		w.authorizedAs(c.path, "metrics")
	}
}

func TestConfigz(t *testing.T) {
	w := newWorld(t, nil)
	code, body := w.do("GET", "/configz", "alice-token")
	var got map[string]map[string]string
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
		t.Fatalf("/configz: %d %q (%v)", code, body, err)
	}
	if len(got) != 1 || got["kubeletconfig"]["staticPodPath"] != "/etc/manifests" {
		t.Errorf("/configz = %v, want the configuration under kubeletconfig", got)
	}
	w.authorizedAs("/configz", "configz", "proxy")
}

func TestProfiling(t *testing.T) {
	w := newWorld(t, nil)
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/heap?debug=1"} {
		if code, body := w.do("GET", p, "alice-token"); code != http.StatusOK || body == "" {
			t.Errorf("%s: %d %q, want a profile", p, code, body)
		}
	}
	if code, body := w.do("GET", "/debug/pprof/profile?seconds=3600", "alice-token"); code != http.StatusBadRequest {
		t.Errorf("an hour's CPU profile: %d %q, want 400", code, body)
	}
	w.authorizedAs("/debug/pprof/heap", "proxy")

	off := newWorldWith(t, nil, func(o *Options) { o.Profiling = false })
	if code, body := off.do("GET", "/debug/pprof/heap", "alice-token"); code != http.StatusMethodNotAllowed || !strings.Contains(body, "disabled") {
		t.Errorf("profiling off: %d %q, want 405 saying it is disabled", code, body)
	}
}
