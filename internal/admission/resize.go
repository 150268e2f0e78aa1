package admission

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The reasons of a resize that waits, as the PodResizePending condition
// gives them.
const (
	ReasonResizeDeferred   = corev1.PodReasonDeferred
	ReasonResizeInfeasible = corev1.PodReasonInfeasible
)

// AdmitResize decides whether the node gives a running pod the cpu and
// memory its resized spec (want) asks, next to others, the pods admitted
// before with the resources they were allocated. The zero Result: it
// does, now. Reason Infeasible: it never will, because the pod alone asks
// more than the node's allocatable (the apiserver's PodResizeValidator
// refuses most such resizes first) or resizes an init container or its
// pod-level resources, which nodeagent resizes in no way (initChanged
// names them). Reason Deferred:
// not while the others hold what they do; the resize is tried again as
// they go. The pod runs on with what it was allocated meanwhile.
func AdmitResize(want *corev1.Pod, node *corev1.Node, others []*corev1.Pod, initChanged []string) Result {
	if len(initChanged) > 0 {
		return Result{Reason: ReasonResizeInfeasible, Message: fmt.Sprintf(
			"nodeagent resizes only app containers in place, not init containers (sidecars included) nor pod-level resources: %s", strings.Join(initChanged, ", "))}
	}
	var alloc amounts
	alloc.add(node.Status.Allocatable)
	asks := podRequests(want, node)
	switch {
	case asks.milliCPU > alloc.milliCPU:
		return Result{Reason: ReasonResizeInfeasible, Message: fmt.Sprintf(
			"Node didn't have enough capacity: cpu, requested: %d, capacity: %d", asks.milliCPU, alloc.milliCPU)}
	case asks.memory > alloc.memory:
		return Result{Reason: ReasonResizeInfeasible, Message: fmt.Sprintf(
			"Node didn't have enough capacity: memory, requested: %d, capacity: %d", asks.memory, alloc.memory)}
	}
	if res := fit(want, node, others); res.Reason != "" {
		return Result{Reason: ReasonResizeDeferred, Message: res.Message}
	}
	return Result{}
}
