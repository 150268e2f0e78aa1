package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"

	"github.com/nodeagent/nodeagent/internal/httplimits"
)

// Options configure a Server. SocketPath and Provider are required.
type Options struct {
	SocketPath string
	Provider   Provider
	// ShutdownTimeout bounds how long Run waits for requests in flight
	// once its context ends; default 5 s.
	ShutdownTimeout time.Duration
	Logger          logr.Logger
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid local API options")

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field.
func (o Options) validate() error {
	var errs []error
	if o.SocketPath == "" {
		errs = append(errs, fmt.Errorf("%w: SocketPath is required", ErrInvalidOptions))
	}
	if o.Provider == nil {
		errs = append(errs, fmt.Errorf("%w: Provider is required", ErrInvalidOptions))
	}
	if o.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: ShutdownTimeout is negative (%v)", ErrInvalidOptions, o.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// Server serves the local API on a unix socket.
type Server struct {
	opts    Options
	log     logr.Logger
	handler http.Handler
	// lim bounds the connections: whoever can reach the socket must not
	// be able to hold the server by sending nothing.
	lim httplimits.Limits
}

// New returns a Server; it touches nothing until Run.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	s := &Server{opts: opts, log: opts.Logger.WithName("localapi").WithValues("socket", opts.SocketPath), lim: httplimits.Defaults()}
	s.handler = s.routes()
	return s, nil
}

// Run listens on the socket (replacing a stale one) and serves until ctx
// ends; then it stops, waits for requests in flight, and removes the
// socket. It returns nil after a clean stop.
func (s *Server) Run(ctx context.Context) error {
	l, err := listen(s.opts.SocketPath)
	if err != nil {
		return err
	}
	s.log.Info("serving the local API")
	srv := httplimits.Server(s.handler, s.lim)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(httplimits.Listener(l, s.lim)) }()

	select {
	case err := <-errc:
		_ = os.Remove(s.opts.SocketPath) // best effort; the serve error is the one to report
		return fmt.Errorf("local API on %s: %w", s.opts.SocketPath, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-errc // http.ErrServerClosed
	// The listener unlinks the socket on close; this covers a failed close.
	if rerr := os.Remove(s.opts.SocketPath); rerr != nil && !os.IsNotExist(rerr) && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("stopping the local API on %s: %w", s.opts.SocketPath, err)
	}
	return nil
}

// Handler returns the API's handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }
