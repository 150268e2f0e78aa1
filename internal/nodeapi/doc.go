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
// Paths served:
//
//	/healthz                                   ok
//	/pods                                      the node's pods, a PodList
//	/metrics/resource                          node, pod and container CPU and memory, container start times, for metrics-server
//	/stats/summary                             the same as a kubelet Summary (CPU and memory only)
//	/containerLogs/{ns}/{pod}/{container}      a container's log (follow, previous, tailLines, ...)
//	/exec/{ns}/{pod}[/{uid}]/{container}       a command's streams, proxied to the runtime (SPDY, WebSocket)
//	/attach/{ns}/{pod}[/{uid}]/{container}     the main process's streams, likewise
//	/portForward/{ns}/{pod}[/{uid}]            connections into the pod's network namespace
//	/run/{ns}/{pod}[/{uid}]/{container}        a command's output (POST, ?cmd=)
//
// A pod is named by namespace and name: a pod from the apiserver by its
// own, a static pod by its full name, which is its mirror pod's. Streams
// are the runtime's own (CRI Exec, Attach, PortForward): the server asks
// the runtime for a session URL and proxies the upgraded connection to it
// with apimachinery's UpgradeAwareHandler.
//
//	srv, err := nodeapi.New(nodeapi.Options{...})
//	err = srv.Run(ctx)
package nodeapi
