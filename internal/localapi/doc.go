// Package localapi is nodeagent's local API: a small JSON-over-HTTP server
// on a unix socket that shows what the agent runs, why a manifest was
// refused, and each pod's timeline. It works without an apiserver, and is
// what manifestctl (and a person with curl) reads.
//
//	srv, err := localapi.New(localapi.Options{SocketPath: "/var/lib/nodeagent/nodeagent.sock", Provider: p})
//	go srv.Run(ctx) // serves until ctx ends, then removes the socket
//
//	c, err := localapi.Dial("/var/lib/nodeagent/nodeagent.sock")
//	pods, err := c.Pods(ctx)
//
// The endpoints, all GET, answer JSON (the wire types in api.go):
//
//	/v1/pods                        every pod the agent knows (PodList)
//	/v1/pods/{namespace}/{name}     one pod and its timeline (PodDetail)
//	/v1/manifests/errors            why manifests are refused (ManifestErrors)
//	/v1/healthz                     the server answers; the agent's readiness (Health)
//
// The server reads the agent only through the Provider interface it
// declares; the wiring in cmd/nodeagent/app adapts the agent and the config
// sources to it. The socket is created with mode 0600: only its owner (root
// on a node) may read it.
package localapi
