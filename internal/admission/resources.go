package admission

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-helpers/resource"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// amounts are requests in the units the kubelet compares: millicores of
// cpu, bytes of memory and ephemeral storage, whole units (rounded up) of
// everything else it counts.
type amounts struct {
	milliCPU, memory, storage int64
	other                     map[corev1.ResourceName]int64
}

// add adds a resource list to a; names the kubelet does not count (pods,
// unprefixed unknown names) are ignored.
func (a *amounts) add(list corev1.ResourceList) {
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			a.milliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			a.memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			a.storage += q.Value()
		default:
			if counted(name) {
				if a.other == nil {
					a.other = map[corev1.ResourceName]int64{}
				}
				a.other[name] += q.Value()
			}
		}
	}
}

func (a *amounts) zero() bool {
	return a.milliCPU == 0 && a.memory == 0 && a.storage == 0 && len(a.other) == 0
}

// fit checks the pod's requests against what the admitted pods leave of
// the node's allocatable, and names the first resource short: the pod
// count, cpu, memory, ephemeral-storage, then the others by name (the
// kubelet's map order is random; this one is not).
func fit(pod *corev1.Pod, node *corev1.Node, admitted []*corev1.Pod) Result {
	var alloc amounts
	alloc.add(node.Status.Allocatable)
	// A node without a "pods" entry takes no pod, as in the kubelet.
	maxPods := node.Status.Allocatable.Pods().Value()

	others := counting(pod.UID, admitted)
	if int64(len(others))+1 > maxPods {
		return outOf(corev1.ResourcePods, 1, int64(len(others)), maxPods)
	}
	want := podRequests(pod, node)
	if want.zero() {
		return Result{}
	}
	var used amounts
	// One map serves every pod's sum: PodRequests clears it first.
	buf := corev1.ResourceList{}
	for _, p := range others {
		// The caller gives each pod with the resources it was allocated,
		// which a resize still pending does not change.
		buf = resource.PodRequests(p, resource.PodResourcesOptions{Reuse: buf})
		used.add(buf)
	}

	switch {
	case want.milliCPU > 0 && want.milliCPU > alloc.milliCPU-used.milliCPU:
		return outOf(corev1.ResourceCPU, want.milliCPU, used.milliCPU, alloc.milliCPU)
	case want.memory > 0 && want.memory > alloc.memory-used.memory:
		return outOf(corev1.ResourceMemory, want.memory, used.memory, alloc.memory)
	case want.storage > 0 && want.storage > alloc.storage-used.storage:
		return outOf(corev1.ResourceEphemeralStorage, want.storage, used.storage, alloc.storage)
	}
	names := make([]corev1.ResourceName, 0, len(want.other))
	for name := range want.other {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if w := want.other[name]; w > 0 && w > alloc.other[name]-used.other[name] {
			return outOf(name, w, used.other[name], alloc.other[name])
		}
	}
	return Result{}
}

// counting returns the admitted pods that hold resources: not the pod
// itself, not mirror pods (their static pod is counted), not pods that
// have ended.
func counting(self types.UID, admitted []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(admitted))
	for _, p := range admitted {
		if p.UID == self || podtypes.IsMirrorPod(p) ||
			podtypes.IsTerminal(p.Status.Phase) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// podRequests is what the pod asks: the larger of its init containers'
// peaks and its app containers (sidecars counted with both), or its
// pod-level requests, plus its overhead. An extended resource the node
// does not list at all is left out, as the kubelet does, since it may be
// a cluster-level resource no node advertises; only the overhead's share
// of it, which the kubelet never drops, remains.
func podRequests(pod *corev1.Pod, node *corev1.Node) amounts {
	reqs := resource.PodRequests(pod, resource.PodResourcesOptions{})
	for name := range reqs {
		if _, listed := node.Status.Allocatable[name]; listed || !extended(name) {
			continue
		}
		if q, ok := pod.Spec.Overhead[name]; ok {
			reqs[name] = q
		} else {
			delete(reqs, name)
		}
	}
	var a amounts
	a.add(reqs)
	return a
}

// outOf words a shortfall as the kubelet does: reason OutOf<name>,
// amounts in the units compared (cpu in millicores).
func outOf(name corev1.ResourceName, requested, used, capacity int64) Result {
	return Result{
		Reason: "OutOf" + string(name),
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, requested, used, capacity),
	}
}

// counted reports whether the kubelet checks a resource besides cpu,
// memory and ephemeral-storage: extended resources, hugepages-<size>,
// kubernetes.io/-prefixed names and attachable-volumes-*.
func counted(name corev1.ResourceName) bool {
	s := string(name)
	return extended(name) ||
		strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
		strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix)
}

// extended reports whether name is an extended resource: a qualified
// name outside the kubernetes.io/ domain, such as example.com/gpu.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	// Quota tracks it as requests.<name>, so that must be a valid name too.
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
