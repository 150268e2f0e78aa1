package httplimits

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound one server. Every field must be positive.
type Limits struct {
	// ReadHeader bounds the time from accepting a connection (or the end
	// of the previous request on it) to the end of the request's headers;
	// a client that sends nothing or trickles bytes is closed then.
	ReadHeader time.Duration
	// Read bounds the time to read a whole request, body included.
	Read time.Duration
	// Write bounds the time from the end of the request's headers to the
	// end of the response.
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request.
	Idle time.Duration
	// MaxHeaderBytes bounds the request line and headers; a larger request
	// is answered 431.
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once; more wait in the
	// kernel's accept queue until one closes.
	MaxConns int
}

// Defaults are the bounds of the agent's servers. They serve small GET
// requests from local tools and scrapers, so a request has no business
// taking long to arrive or carrying large headers. Write leaves room for a
// 30 s CPU profile (pprof's default) under --profiling.
func Defaults() Limits {
	return Limits{
		ReadHeader:     5 * time.Second,
		Read:           10 * time.Second,
		Write:          45 * time.Second,
		Idle:           30 * time.Second,
		MaxHeaderBytes: 16 << 10,
		MaxConns:       64,
	}
}

// Server returns an http.Server for h with the time and header bounds of
// lim. Serve it on Listener(l, lim) to bound the connections too.
func Server(h http.Handler, lim Limits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeader,
		ReadTimeout:       lim.Read,
		WriteTimeout:      lim.Write,
		IdleTimeout:       lim.Idle,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
	}
}

// Listener returns l accepting at most lim.MaxConns connections at once.
func Listener(l net.Listener, lim Limits) net.Listener {
	return netutil.LimitListener(l, lim.MaxConns)
}
