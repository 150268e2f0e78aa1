// Package httplimits bounds what a client can make nodeagent's HTTP servers
// hold: how long a connection may take to send its headers and body, how
// long a response may take to write, how long an idle keep-alive
// connection stays open, how large the headers may be, and how many
// connections are open at once. Every server of the agent (the local API
// on its unix socket, /healthz /readyz /metrics on --serve-address) is
// built with it, so that a client that opens connections and sends nothing,
// or trickles its headers a byte at a time, is cut off after a bound
// instead of holding goroutines and file descriptors.
//
//	lim := httplimits.Defaults()
//	srv := httplimits.Server(handler, lim)
//	err := srv.Serve(httplimits.Listener(l, lim))
package httplimits
