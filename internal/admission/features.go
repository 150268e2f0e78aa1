package admission

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// ReasonFeatureUnsupported is the kubelet's reason for a pod that needs a
// node feature the node does not declare.
const ReasonFeatureUnsupported = "PodFeatureUnsupported"

// unknownVersion stands for a node version that does not parse: older than
// every feature's last relevant version, so every feature counts.
var unknownVersion = version.MajorMinor(0, 0)

// declaredFeatures refuses a pod that needs a feature the node does not
// list in status.declaredFeatures, as the kubelet's declared-features
// admission does (NodeDeclaredFeatures, GA in 1.37): the scheduler places
// no such pod on the node, so only a pod bound by name gets here.
// nodeagent declares none of the features the framework knows
// (RestartAllContainers, the resizes beyond containers' own resources,
// ...), so a pod that needs one is refused instead of run without it.
func declaredFeatures(pod *corev1.Pod, node *corev1.Node) Result {
	v, err := version.ParseGeneric(node.Status.NodeInfo.KubeletVersion)
	if err != nil {
		v = unknownVersion
	}
	fw := ndf.DefaultFramework
	needs, err := fw.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, v)
	if err != nil {
		return Result{ReasonFeatureUnsupported, fmt.Sprintf("Failed to infer pod's feature requirements: %v", err)}
	}
	match, err := fw.MatchNode(needs, node)
	if err != nil {
		return Result{ReasonFeatureUnsupported, fmt.Sprintf("Failed to match pod's feature requirements against the node: %v", err)}
	}
	if !match.IsMatch {
		return Result{ReasonFeatureUnsupported, "Pod requires node features that are not available: " + strings.Join(match.UnsatisfiedRequirements, ", ")}
	}
	return Result{}
}
