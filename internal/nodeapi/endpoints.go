package nodeapi

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"strconv"

	"k8s.io/component-base/metrics"
)

// maxProfileSeconds bounds how long a CPU profile, an execution trace or
// a profile's delta asked through /debug/pprof/ may run.
const maxProfileSeconds = 300

// addEndpoints adds the kubelet's read-only endpoints beside the pods'
// own: the agent's metrics (/metrics, nodes/metrics), the prober's
// (/metrics/probes), its configuration (/configz, nodes/configz), Go's
// profiles (/debug/pprof/, nodes/proxy) and the pods the runtime runs
// (/runningpods/, nodes/pods).
func (s *Server) addEndpoints(mux *http.ServeMux) {
	opts := metrics.HandlerOpts{ErrorHandling: metrics.ContinueOnError}
	mux.Handle("GET /metrics", metrics.HandlerFor(s.opts.Metrics, opts))
	mux.Handle("GET /metrics/probes", metrics.HandlerFor(s.opts.ProbeMetrics, opts))
	mux.HandleFunc("GET /configz", s.serveConfigz)
	mux.HandleFunc("GET /runningpods/", s.serveRunningPods)
	if !s.opts.Profiling {
		mux.HandleFunc("GET /debug/pprof/", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "profiling endpoint is disabled.", http.StatusMethodNotAllowed)
		})
		return
	}
	// Index serves the named profiles (heap, goroutine, allocs, ...)
	// under its prefix; the others are handlers of their own.
	for p, h := range map[string]http.HandlerFunc{
		"": pprof.Index, "cmdline": pprof.Cmdline, "symbol": pprof.Symbol, "profile": pprof.Profile, "trace": pprof.Trace,
	} {
		mux.Handle("GET /debug/pprof/"+p, boundSeconds(h))
	}
}

// boundSeconds refuses a profile, trace or delta of a profile asked to
// run longer than maxProfileSeconds: the request holds a connection (and,
// for a CPU profile, the process's only profiler) for that long.
func boundSeconds(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("seconds"); v != "" {
			if sec, err := strconv.ParseFloat(v, 64); err != nil || sec <= 0 || sec > maxProfileSeconds {
				http.Error(w, "seconds must be a number of seconds above 0 and at most "+strconv.Itoa(maxProfileSeconds), http.StatusBadRequest)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// serveConfigz answers the agent's effective configuration, as the
// kubelet's /configz does: an object whose one key, kubeletconfig, holds
// it.
func (s *Server) serveConfigz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(map[string]any{"kubeletconfig": s.opts.Config}); err != nil {
		s.log.V(2).Info("writing /configz", "err", err)
	}
}
