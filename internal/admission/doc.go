// Package admission decides, as the kubelet does before it starts a pod,
// whether a pod may run on this node: a pure function of the pod, the
// Node object and the pods already admitted, with the kubelet's reasons
// and messages (the OS ones also name both OSes) so that a refused pod's
// Failed status and event read as a kubelet's would.
//
//	r := admission.Admit(pod, node, admitted)
//	if r.Reason != "" {
//		// write phase Failed with r.Reason and r.Message, and an event
//	}
//
// # Checks, in the kubelet's order
//
// The first failing check decides (the kubelet's predicate admit handler,
// pkg/kubelet/lifecycle/predicate.go, with the scheduler's AdmissionCheck
// it calls):
//
//  1. No Node: InvalidNodeInfo.
//  2. A pod label kubernetes.io/os other than the node's OS:
//     PodOSSelectorNodeLabelDoesNotMatch. Like the kubelet, the node's OS
//     is the agent's own (runtime.GOOS), whatever the Node's label says,
//     and it is the pod's labels, not its nodeSelector, that are read.
//  3. spec.os.name other than the node's OS: PodOSNotSupported.
//  4. supplementalGroupsPolicy Strict on a node whose status does not
//     declare the feature: SupplementalGroupsPolicyNotSupported.
//     Then spec.resourceClaims: UnsupportedResourceClaims (nodeagent's
//     own reason: it has no DRA driver to prepare the claims, where the
//     kubelet would leave the pod pending on its drivers).
//  5. Resources (resources.go): the pod count, then cpu, memory,
//     ephemeral-storage, then the other counted resources by name, each
//     against node.Status.Allocatable less what the admitted pods request:
//     OutOf<resource> (OutOfcpu, OutOfpods, OutOfexample.com/gpu, ...).
//     A pod's request is the kubelet's: the larger of its init containers'
//     peak and its app containers, sidecars counted in both, or its
//     pod-level requests, plus its overhead. An extended resource
//     (example.com/gpu) that the node does not list at all is not
//     checked, as in the kubelet; a node without a "pods" entry takes no
//     pod, and one without a cpu entry no pod that asks for cpu.
//  6. nodeSelector and required node affinity: NodeAffinity.
//  7. spec.nodeName set and not the node's name: NodeName (an empty
//     nodeName passes, as in the kubelet).
//  8. A NoExecute taint of the node that the pod does not tolerate:
//     TaintToleration. Static pods are not checked, as in the kubelet;
//     NoSchedule and PreferNoSchedule taints are the scheduler's business
//     and never refuse a pod here.
//
// # Critical pods
//
// Static pods, mirror pods and pods of priority 2000000000 or more
// (system-cluster-critical, system-node-critical) are critical: a resource
// shortfall never refuses them, while every other check does. The kubelet
// would evict lesser pods to make room, or refuse the pod with
// UnexpectedAdmissionError when even that could not; nodeagent does not preempt, so a critical pod that does not
// fit is admitted anyway and the node is overcommitted until pods end.
//
// # Host ports
//
// HostPorts (hostports.go) admits a pod only when none of its host ports
// collides with one an admitted pod holds. It is stateful, unlike Admit:
// the agent's sync loop owns it, tells it which holders have stopped
// (Release) and asks again for the pods held back (Held). A static pod is
// held back, Pending with HostPortConflict, until the port is free; an
// API pod is refused for good (NodePorts).
//
// # Pods from the apiserver
//
// AdmitAPIPod is the whole admission of a pod bound through the apiserver,
// in the kubelet's order: pressure, Sysctls, Admit, the node features the
// pod needs against those the Node declares (features.go: the kubelet's
// declared-features admission with component-helpers' framework,
// PodFeatureUnsupported; nodeagent declares none of them), then
// HostPorts. Static pods are checked only for their sysctls and their
// host ports. Waiting (waiting.go) holds the API pods that came before
// the Node was known, to be admitted once it is, the oldest first.
//
// # Left to others
//
// The kubelet's other admit handlers (eviction
// under node pressure, AppArmor, device plugins and DRA) are not part of
// this package; a pod's runtime class is resolved when its sandbox is
// created (internal/runtime).
//
// # Sysctls
//
// Sysctls (sysctls.go) is the kubelet's sysctl admission, which applies
// to every pod, static ones too, and comes before Admit: a pod may set
// the kubelet's safe sysctls (those namespaced only from some kernel on,
// if this kernel namespaces them) and the unsafe ones the administrator
// allowed (--allowed-unsafe-sysctls, names or "prefix*" patterns of
// namespaced sysctls), each only in a namespace the pod does not share
// with the host: net.* not with hostNetwork, kernel.sem, kernel.shm*,
// kernel.msg* and fs.mqueue.* not with hostIPC, user.* not in the host's
// user namespace. Anything else refuses the pod: SysctlForbidden, with
// the kubelet's message naming the first such sysctl. A pod the runtime cannot
// run for other reasons is refused by internal/runtime.
//
// # Resizes
//
// AdmitResize decides a running API pod's resize (resize.go): given now,
// Deferred while the other pods hold what it needs, or Infeasible when
// the pod alone asks more than the node's allocatable or resizes an init
// container.
//
// # What the caller passes
//
// admitted is the pods the agent runs or is starting, mirror pods
// excluded (one found is skipped, as it would count its static pod
// twice). Pods in phase Succeeded or Failed, and the pod itself (by UID),
// are not counted. A pod holds what its spec asks, which the caller gives
// as allocated: a resize still pending is not counted (the status a
// kubelet wrote is not read). node should be the freshest Node the agent has: the
// kubelet fetches it again before refusing a pod for NodeAffinity alone.
package admission
