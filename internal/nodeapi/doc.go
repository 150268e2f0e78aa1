// Package nodeapi is the node's API on port 10250: what the apiserver
// calls for `kubectl logs`, `exec`, `attach` and `port-forward`, with the
// kubelet's paths and security.
//
// Every request is authenticated and authorized by the apiserver, as the
// kubelet does it, with k8s.io/apiserver's delegating authenticator (a
// client certificate signed by --client-ca-file, or a bearer token
// through a cached TokenReview; anonymous requests are refused) and
// authorizer (a cached SubjectAccessReview on the node's `nodes`
// resource, the subresource chosen from the path as the kubelet chooses
// it: attributes.go).
//
// Paths served (and the nodes subresource each is authorized as):
//
//	/healthz                                   ok (healthz, or proxy)
//	/pods                                      the node's pods, a PodList (pods, or proxy)
//	/runningpods/                              the pods the runtime runs, from its sandboxes and containers (pods, or proxy)
//	/metrics                                   the agent's own metrics, as on --serve-address (metrics)
//	/metrics/probes                            prober_probe_total and prober_probe_duration_seconds (metrics)
//	/metrics/resource                          node, pod and container CPU and memory, container start times, for metrics-server (metrics)
//	/stats/summary                             a kubelet Summary: CPU, memory, filesystems (no network yet) (stats)
//	/configz                                   the effective configuration under "kubeletconfig" (configz, or proxy)
//	/debug/pprof/                              Go's profiles, unless profiling is off (proxy)
//	/containerLogs/{ns}/{pod}/{container}      a container's log (follow, previous, tailLines, ...)
//	/exec/{ns}/{pod}[/{uid}]/{container}       a command's streams, proxied to the runtime (SPDY, WebSocket)
//	/attach/{ns}/{pod}[/{uid}]/{container}     the main process's streams, likewise
//	/portForward/{ns}/{pod}[/{uid}]            connections into the pod's network namespace
//	/run/{ns}/{pod}[/{uid}]/{container}        a command's output (POST, ?cmd=)
//	/logs/[{path}]                             the node's system logs (Options.SystemLogDir, /var/log), nodes/log
//
// Its serving certificate is Options.GetCertificate's, asked at each
// handshake (the cluster's, renewed: see nodeidentity.Serving), or the
// one of CertFile and KeyFile, or one made self-signed in CertDir.
//
// The last five need proxy.
//
// A pod is named by namespace and name: a pod from the apiserver by its
// own, a static pod by its full name, which is its mirror pod's. Streams
// are the runtime's own (CRI Exec, Attach, PortForward): the server asks
// the runtime for a session URL and proxies the upgraded connection to it
// with apimachinery's UpgradeAwareHandler. kubectl's WebSocket sessions
// (exec and attach v5, port-forward's tunnel), which the apiserver passes
// through because the Node declares ExtendWebSocketsToKubelet, are
// translated to SPDY on the way with k8s.io/apiserver's stream translator
// and tunnelling handler, as the kubelet does. An exec's, attach's or
// run's container is found with one filtered ListContainers call.
//
// What a client sends is bounded before any handler runs: the TLS
// handshake and the headers must arrive within 10 s (a silent or slow
// client is closed), headers are at most 64 KiB, and a body over 16 KiB
// is refused (413): no path reads one.
//
//	srv, err := nodeapi.New(nodeapi.Options{...})
//	err = srv.Run(ctx)
package nodeapi
