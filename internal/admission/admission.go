package admission

import (
	"fmt"
	"runtime"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Result is the outcome of Admit. The zero Result admits the pod; a
// refused pod's Reason is one of the kubelet's admission reasons and
// Message says what stood in the way.
type Result struct {
	Reason  string
	Message string
}

// The kubelet's reasons; OutOf<resource> ones are made in resources.go.
const (
	reasonInvalidNodeInfo    = "InvalidNodeInfo"
	reasonOSLabel            = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonOSField            = "PodOSNotSupported"
	reasonSupplementalGroups = "SupplementalGroupsPolicyNotSupported"
	reasonNodeAffinity       = "NodeAffinity"
	reasonNodeName           = "NodeName"
	reasonTaint              = "TaintToleration"
	reasonResourceClaims     = "UnsupportedResourceClaims"
)

// Admit decides whether pod may start on node beside the admitted pods;
// see the package doc for the checks and their order. It reads its
// arguments only.
func Admit(pod *corev1.Pod, node *corev1.Node, admitted []*corev1.Pod) Result {
	if node == nil {
		return Result{reasonInvalidNodeInfo, "the agent has no Node object to admit the pod against"}
	}
	if r := admitOS(pod); r.Reason != "" {
		return r
	}
	if strictGroupsUnsupported(pod, node) {
		return Result{reasonSupplementalGroups, fmt.Sprintf("SupplementalGroupsPolicy=%s is not supported in this node", corev1.SupplementalGroupsPolicyStrict)}
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return Result{reasonResourceClaims, "Failed to admit pod: it has resourceClaims, and this node runs no dynamic resource allocation (DRA) driver to prepare them"}
	}
	// Only a critical pod survives a resource shortfall, so the arithmetic
	// is skipped for it.
	if !podtypes.IsCritical(pod) {
		if r := fit(pod, node, admitted); r.Reason != "" {
			return r
		}
	}
	if r := admitNodeAffinity(pod, node); r.Reason != "" {
		return r
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return predicateFailed(reasonNodeName, "node(s) didn't match the requested node name")
	}
	if !podtypes.IsStaticPod(pod) && untoleratedNoExecute(pod, node) {
		return predicateFailed(reasonTaint, "node(s) had taints that the pod didn't tolerate")
	}
	return Result{}
}

// AdmitStatic decides whether a static pod may run on node, whose labels
// are the Node's when the agent knows it, else those the agent registers
// it with: the checks of Admit that a static pod is subject to under the
// kubelet (the OS, nodeSelector and required node affinity). A static pod
// is critical, so no shortfall of resources refuses it, and NoExecute
// taints do not apply to it; its nodeName is the agent's own.
func AdmitStatic(pod *corev1.Pod, node *corev1.Node) Result {
	if r := admitOS(pod); r.Reason != "" {
		return r
	}
	return admitNodeAffinity(pod, node)
}

// admitOS refuses a pod whose kubernetes.io/os label or spec.os names
// another OS than the agent's own, whatever the Node's label says.
func admitOS(pod *corev1.Pod) Result {
	if want, ok := pod.Labels[corev1.LabelOSStable]; ok && want != runtime.GOOS {
		return Result{reasonOSLabel, fmt.Sprintf("Failed to admit pod as the `%s` label %q doesn't match the node's OS %q", corev1.LabelOSStable, want, runtime.GOOS)}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != runtime.GOOS {
		return Result{reasonOSField, fmt.Sprintf("Failed to admit pod as the OS field %q doesn't match the node's OS %q", pod.Spec.OS.Name, runtime.GOOS)}
	}
	return Result{}
}

// admitNodeAffinity refuses a pod whose nodeSelector or required node
// affinity the node's labels do not match. A selector that does not parse
// matches nothing, as in the kubelet.
func admitNodeAffinity(pod *corev1.Pod, node *corev1.Node) Result {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return predicateFailed(reasonNodeAffinity, "node(s) didn't match Pod's node affinity/selector")
	}
	return Result{}
}

// predicateFailed words a failed check as the kubelet does.
func predicateFailed(name, why string) Result {
	return Result{name, fmt.Sprintf("Predicate %s failed: %s", name, why)}
}

// strictGroupsUnsupported: a pod asking for Strict supplemental groups
// needs a node that declares it can honour them.
func strictGroupsUnsupported(pod *corev1.Pod, node *corev1.Node) bool {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil || *sc.SupplementalGroupsPolicy != corev1.SupplementalGroupsPolicyStrict {
		return false
	}
	f := node.Status.Features
	return f == nil || f.SupplementalGroupsPolicy == nil || !*f.SupplementalGroupsPolicy
}

// untoleratedNoExecute reports whether the node has a NoExecute taint the
// pod does not tolerate. Lt/Gt tolerations match nothing, as they do while
// the kubelet's TaintTolerationComparisonOperators gate is off (its
// default); the logger is used only for those.
func untoleratedNoExecute(pod *corev1.Pod, node *corev1.Node) bool {
	_, found := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }, false)
	return found
}
