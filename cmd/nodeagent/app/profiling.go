package app

import (
	"net/http"
	"net/http/pprof"
)

// addProfiling serves Go's pprof profiles under /debug/pprof/, as the
// kubelet does with enableProfilingHandler: heap, goroutine, CPU and the
// rest, for `go tool pprof http://<serve-address>/debug/pprof/heap`. They
// tell a reader of the address what the agent runs and holds, so they are
// off unless --profiling asks for them.
func addProfiling(mux *http.ServeMux) {
	// Index serves the named profiles (heap, goroutine, allocs, ...) under
	// its prefix; the others are handlers of their own.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
