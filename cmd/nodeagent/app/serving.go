package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/httplimits"
)

// serving answers /healthz, /readyz and /metrics over plain HTTP, and
// /debug/pprof/ when profiling is on.
type serving struct {
	l       net.Listener
	handler http.Handler
	// lim bounds the connections: --serve-address may be reachable from
	// more than the node, and no client may hold the server by sending
	// nothing.
	lim httplimits.Limits
	log logr.Logger
}

// newServing binds addr at once, so that a taken port fails the start
// with a clear error instead of a part failing later. /healthz answers
// 200 while every check passes, and names the ones that fail otherwise
// (/healthz/<check> answers for one, ?verbose lists them), as the
// kubelet's healthz port does with k8s.io/apiserver's handler.
func newServing(addr string, reg metrics.Gatherer, ready func() error, checks []healthz.HealthChecker, profiling bool, log logr.Logger) (*serving, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--serve-address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	healthz.InstallPathHandler(mux, "/healthz", checks...)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", metrics.HandlerFor(reg, metrics.HandlerOpts{}))
	if profiling {
		addProfiling(mux)
	}
	return &serving{
		l:       l,
		handler: mux,
		lim:     httplimits.Defaults(),
		log:     log.WithName("serving").WithValues("address", l.Addr().String()),
	}, nil
}

// localMetrics is what /metrics serves here: the node API's (servedMetrics)
// and the prober's, whose process_start_time_seconds (there for the node
// API's /metrics/probes, as the kubelet's) is the process collector's too,
// and must be gathered once.
func localMetrics(reg, probes metrics.KubeRegistry) metrics.Gatherer {
	return append(servedMetrics(reg), prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := probes.Gather()
		return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == "process_start_time_seconds" }), err
	}))
}

// Run serves until ctx ends.
func (s *serving) Run(ctx context.Context) error {
	srv := httplimits.Server(s.handler, s.lim)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(httplimits.Listener(s.l, s.lim)) }()
	s.log.Info("serving /healthz, /readyz and /metrics")
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", s.l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// healthChecks are /healthz's checks, the kubelet's (ping, log, the sync
// loop) and the PLEG's: a stuck loop or relist fails the agent's health,
// so that systemd or an operator's probe restarts it.
func healthChecks(ag *agent.Agent) []healthz.HealthChecker {
	return []healthz.HealthChecker{
		healthz.PingHealthz, healthz.LogHealthz,
		healthz.NamedCheck("syncloop", func(*http.Request) error { return ag.SyncLoopHealthy() }),
		healthz.NamedCheck("pleg", func(*http.Request) error { return ag.PLEGHealthy() }),
	}
}
