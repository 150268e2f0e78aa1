package statusmanager

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
)

// merge returns the status to write over target's: the agent's own
// conditions from want, and what others own as target holds it, so that a
// write never removes or rewinds it. Others' conditions (a readiness
// gate's, a controller's) come first, as the kubelet orders them; the
// resource claims' statuses are the scheduler's and their drivers'.
func merge(want *corev1.PodStatus, target *corev1.PodStatus) *corev1.PodStatus {
	out := want.DeepCopy()
	out.Conditions = nil
	theirs := target.DeepCopy()
	for _, c := range theirs.Conditions {
		if !status.Owned(c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	for _, c := range want.Conditions {
		if status.Owned(c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	out.ResourceClaimStatuses = theirs.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = theirs.ExtendedResourceClaimStatus
	out.NodeAllocatableResourceClaimStatuses = theirs.NodeAllocatableResourceClaimStatuses
	return out
}
