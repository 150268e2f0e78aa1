package eviction

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// The resources of the signals that are no resource of a pod's spec, as
// the kubelet names them in its messages.
const (
	resourcePIDs   corev1.ResourceName = "pids"
	resourceInodes corev1.ResourceName = "inodes"
)

// resourceOf is the resource a signal measures.
func resourceOf(signal string) corev1.ResourceName {
	switch signal {
	case SignalMemoryAvailable, SignalAllocatableMemoryAvailable:
		return corev1.ResourceMemory
	case SignalPIDAvailable:
		return resourcePIDs
	case SignalNodeFSInodesFree, SignalImageFSInodesFree:
		return resourceInodes
	default:
		return corev1.ResourceEphemeralStorage
	}
}

// signalOrder is which met signal is acted on first: memory, as the
// kubelet does, then the disk, then process IDs.
func signalOrder(signal string) int {
	return slices.Index([]string{
		SignalMemoryAvailable, SignalAllocatableMemoryAvailable,
		SignalNodeFSAvailable, SignalNodeFSInodesFree, SignalImageFSAvailable, SignalImageFSInodesFree,
		SignalPIDAvailable,
	}, signal)
}

// rank orders pods for eviction for res, as the kubelet does: for memory
// and disk, first those using more than they requested, then the lower
// priority, then the most used above the request; for process IDs, the
// lower priority first. Inodes are ranked by the bytes of disk used: the
// agent does not count a pod's inodes.
func rank(pods []*corev1.Pod, res corev1.ResourceName, usage map[types.UID]PodUsage) {
	used := func(p *corev1.Pod) int64 {
		u := usage[p.UID]
		if res == corev1.ResourceMemory {
			return u.Memory
		}
		return u.localUsage()
	}
	above := func(p *corev1.Pod) int64 { return used(p) - requested(p, res) }
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		if res != resourcePIDs {
			if c := cmp.Compare(boolRank(above(a) > 0), boolRank(above(b) > 0)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(priority(a), priority(b)); c != 0 || res == resourcePIDs {
			return c
		}
		return cmp.Compare(above(b), above(a))
	})
}

// boolRank puts true first.
func boolRank(b bool) int {
	if b {
		return 0
	}
	return 1
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// requested is the pod's request of res: its long-running containers'
// requests summed.
func requested(p *corev1.Pod, res corev1.ResourceName) int64 {
	var sum int64
	for _, c := range longRunning(p) {
		sum += c.Resources.Requests.Name(res, resource.BinarySI).Value()
	}
	return sum
}

// longRunning are the containers that run beside each other once the pod
// has started: its app containers and its sidecars.
func longRunning(p *corev1.Pod) []*corev1.Container {
	out := make([]*corev1.Container, 0, len(p.Spec.Containers))
	for i := range p.Spec.InitContainers {
		if c := &p.Spec.InitContainers[i]; podtypes.IsSidecar(c) {
			out = append(out, c)
		}
	}
	for i := range p.Spec.Containers {
		out = append(out, &p.Spec.Containers[i])
	}
	return out
}

// message is the kubelet's eviction message: the resource the node was
// low on, the threshold and what was available, and for memory each
// container using more than it requested.
func message(res corev1.ResourceName, pod *corev1.Pod, u PodUsage, t Threshold, r Reading) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The node was low on resource: %v. ", res)
	bound := resource.NewQuantity(t.of(r.Capacity), resource.BinarySI)
	if t.Quantity != nil {
		bound = t.Quantity
	}
	fmt.Fprintf(&b, "Threshold quantity: %v, available: %v. ", bound.String(), quantity(res, r.Available).String())
	if res == corev1.ResourceMemory {
		for _, c := range pod.Spec.Containers {
			used, ok := u.ContainerMemory[c.Name]
			req := c.Resources.Requests.Name(res, resource.BinarySI)
			if ok && used > req.Value() {
				fmt.Fprintf(&b, "Container %s was using %s, request is %s, has larger consumption of %v. ",
					c.Name, quantity(res, used).String(), req.String(), res)
			}
		}
	}
	return b.String()
}

// quantity shows bytes in binary units, as the kubelet's messages do;
// counts as they are.
func quantity(res corev1.ResourceName, v int64) *resource.Quantity {
	if res == resourcePIDs || res == resourceInodes {
		return resource.NewQuantity(v, resource.DecimalSI)
	}
	return resource.NewQuantity(v, resource.BinarySI)
}
