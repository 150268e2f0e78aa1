// Package podtypes holds the vocabulary every nodeagent module shares: the
// names of pod sources, the annotation keys that mark static and mirror pods,
// pod full names, the typed pod update that sources emit, distinct UID
// types for pods as the agent resolves them and for mirror pods, and the
// few rules every module applies alike (GracePeriod, IsSidecar, QOSClass,
// IsCritical, IsTerminal).
//
// It is the leaf of the module graph: it imports only k8s.io/api and
// k8s.io/apimachinery, so any other module can depend on it cheaply.
//
// A static pod is a pod that came from a node-local source (a manifest file
// or an HTTP URL). The apiserver learns about it through a mirror pod: an API
// object with the same full name whose mirror annotation carries the static
// pod's config hash.
//
//	if podtypes.IsStaticPod(pod) {
//		name := podtypes.PodFullName(pod) // "etcd-node1_kube-system"
//		...
//	}
package podtypes
