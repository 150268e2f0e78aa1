package nodeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/netutil"
	certutil "k8s.io/client-go/util/cert"
)

// Bounds of the server. Streams and followed logs may last long, so no
// request as a whole is bounded in time; what a client sends before the
// handler runs is.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 90 * time.Second
	maxHeaderBytes    = 64 << 10
	maxBodyBytes      = 16 << 10 // no path reads a body; this refuses a large one early
	maxConns          = 512
	shutdownGrace     = 5 * time.Second
)

// Server is the node API's HTTPS server.
type Server struct {
	opts    Options
	l       net.Listener
	conns   *connTracker
	tls     *tls.Config
	auth    *auth
	rates   cpuRates
	handler http.Handler
	log     logr.Logger
}

// New checks the options, loads (or makes) the serving certificate, builds
// the authenticator and authorizer and binds the address, so that a taken
// port or a bad certificate fails the agent's start.
func New(o Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	log := o.Logger.WithName("nodeapi")
	o.Logger = log
	getCert := o.GetCertificate
	if getCert == nil {
		cert, err := o.servingCertificate()
		if err != nil {
			return nil, err
		}
		getCert = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	var clientCAs *x509.CertPool
	var err error
	if o.ClientCAFile != "" {
		if clientCAs, err = certutil.NewPool(o.ClientCAFile); err != nil {
			return nil, fmt.Errorf("--client-ca-file %s: %w", o.ClientCAFile, err)
		}
	}
	a, err := newAuth(&o)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(o.Address, strconv.Itoa(int(o.Port)))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("node API on %s: %w", addr, err)
	}
	s := &Server{opts: o, l: l, conns: newConnTracker(), tls: o.tlsConfig(getCert, clientCAs), auth: a, log: log.WithValues("address", l.Addr().String())}
	s.handler = limitBody(a.filter(s.routes()))
	return s, nil
}

// Port is the port the server listens on.
func (s *Server) Port() int32 {
	return int32(s.l.Addr().(*net.TCPAddr).Port) // #nosec G115 -- a TCP port fits
}

// routes are the kubelet's paths the server answers.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /pods", s.servePods)
	mux.HandleFunc("GET /metrics/resource", s.serveResourceMetrics)
	mux.HandleFunc("GET /stats/summary", s.serveSummary)
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.serveContainerLogs)
	for _, method := range []string{"GET", "POST"} {
		for _, p := range []string{"/{namespace}/{pod}/{container}", "/{namespace}/{pod}/{uid}/{container}"} {
			mux.HandleFunc(method+" /exec"+p, s.serveExec)
			mux.HandleFunc(method+" /attach"+p, s.serveAttach)
		}
		for _, p := range []string{"/{namespace}/{pod}", "/{namespace}/{pod}/{uid}"} {
			mux.HandleFunc(method+" /portForward"+p, s.servePortForward)
		}
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", s.serveRun)
	mux.HandleFunc("POST /run/{namespace}/{pod}/{uid}/{container}", s.serveRun)
	// The node's system logs (nodes/log): syslogs.go.
	mux.Handle("GET /logs/", s.systemLogs())
	s.addEndpoints(mux)
	return cleanPaths(mux)
}

// cleanPaths refuses a path that is not in its clean form before it is
// authorized: authorization judges the path as written, the router the
// path as it resolves, and they must be the same.
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if c := path.Clean(p); c != p && c+"/" != p || strings.Contains(strings.ToLower(r.URL.RawPath), "%2f") {
			http.Error(w, "the path is not in its clean form", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Run serves until ctx ends; then the requests' contexts end (a followed
// log stops) and every connection still open, proxied streams too, is
// closed.
func (s *Server) Run(ctx context.Context) error {
	srv := &http.Server{
		Handler:           s.handler,
		TLSConfig:         s.tls,
		ReadHeaderTimeout: s.opts.readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	authDone := make(chan struct{})
	go func() {
		defer close(authDone)
		s.auth.run(ctx)
	}()
	errc := make(chan error, 1)
	go func() {
		errc <- srv.Serve(tls.NewListener(s.conns.listener(netutil.LimitListener(s.l, maxConns)), s.tls))
	}()
	s.log.Info("serving the node API", "clientCA", s.opts.ClientCAFile)
	var err error
	select {
	case err = <-errc:
		err = fmt.Errorf("node API on %s: %w", s.l.Addr(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		err = srv.Shutdown(sctx)
		cancel()
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	s.conns.closeAll()
	<-authDone
	return err
}
