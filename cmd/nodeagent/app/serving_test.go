package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/component-base/metrics"
)

// TestProfilingIsServedOnlyWhenAsked: the pprof handlers tell whoever
// reaches the serve address what the agent holds, so they are off unless
// --profiling turns them on.
func TestProfilingIsServedOnlyWhenAsked(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		s, err := newServing("127.0.0.1:0", metrics.NewKubeRegistry(), func() error { return nil }, nil, profiling, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		want := http.StatusNotFound
		if profiling {
			want = http.StatusOK
		}
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1"} {
			resp, err := http.Get("http://" + s.l.Addr().String() + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("profiling %v: GET %s = %d, want %d", profiling, path, resp.StatusCode, want)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}
}

// TestLocalMetricsHoldTheProbersOnce: /metrics on the serve address
// shows the prober's metrics beside the agent's, and the start time both
// registries hold, once.
func TestLocalMetricsHoldTheProbersOnce(t *testing.T) {
	reg, probes, err := (&Options{RootDir: t.TempDir(), PodLogDir: t.TempDir(), GCPercent: 100}).setUp(logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	c := metrics.NewCounter(&metrics.CounterOpts{Name: "prober_things_total", Help: "things", StabilityLevel: metrics.ALPHA})
	probes.MustRegister(c)
	c.Inc()
	mfs, err := localMetrics(reg, probes).Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	names := map[string]int{}
	for _, mf := range mfs {
		names[mf.GetName()]++
	}
	if names["prober_things_total"] != 1 || names["process_start_time_seconds"] != 1 || names["go_goroutines"] != 1 {
		t.Errorf("families %v, want the prober's, the agent's, and the start time once", names)
	}
}

// TestHealthzFailsWithItsChecks: /healthz answers 200 while its checks
// pass; a failing check (a stuck sync loop, say) makes it 500, naming the
// check, and /healthz/<check> answers for that one alone.
func TestHealthzFailsWithItsChecks(t *testing.T) {
	var stuck atomic.Bool
	checks := []healthz.HealthChecker{
		healthz.PingHealthz,
		healthz.NamedCheck("syncloop", func(*http.Request) error {
			if stuck.Load() {
				return errors.New("the sync loop last began an iteration 6m0s ago; threshold is 5m0s")
			}
			return nil
		}),
	}
	s, err := newServing("127.0.0.1:0", metrics.NewKubeRegistry(), func() error { return nil }, checks, false, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.l.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("healthy: %d %q", code, body)
	}
	stuck.Store(true)
	if code, body := get("/healthz?verbose"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]syncloop failed") || !strings.Contains(body, "[+]ping ok") {
		t.Errorf("a stuck loop: %d %q", code, body)
	}
	if code, _ := get("/healthz/syncloop"); code != http.StatusInternalServerError {
		t.Errorf("/healthz/syncloop of a stuck loop: %d", code)
	}
	if code, _ := get("/healthz/ping"); code != http.StatusOK {
		t.Errorf("/healthz/ping: %d", code)
	}
}
