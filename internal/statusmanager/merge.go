package statusmanager

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// merge returns the status to write over target's: the agent's own
// conditions from want, and what others own as target holds it, so that a
// write never removes or rewinds it. Others' conditions (a readiness
// gate's, a controller's) come first, as the kubelet orders them; the
// resource claims' statuses are the scheduler's and their drivers'. A
// shared condition of want (an eviction's DisruptionTarget) replaces
// theirs, once the pod has finished.
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
		switch {
		case status.Owned(c.Type):
			out.Conditions = append(out.Conditions, c)
		case status.Shared(c.Type) && podtypes.IsTerminal(want.Phase):
			i := slices.IndexFunc(out.Conditions, func(o corev1.PodCondition) bool { return o.Type == c.Type })
			if i < 0 {
				out.Conditions = append(out.Conditions, c)
			} else {
				out.Conditions[i] = c
			}
		}
	}
	out.ResourceClaimStatuses = theirs.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = theirs.ExtendedResourceClaimStatus
	out.NodeAllocatableResourceClaimStatuses = theirs.NodeAllocatableResourceClaimStatuses
	return out
}
