package downward

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Allocatable returns the node's allocatable resources, which stand for a
// limit a container does not set.
type Allocatable func() (corev1.ResourceList, error)

// ResourceValue resolves a resourceFieldRef against the named container
// (ref.ContainerName, when set, wins: volumes must name one):
// limits.cpu, limits.memory, limits.ephemeral-storage and the same
// requests, divided by ref.Divisor (default 1) and rounded up, as the
// kubelet does; cpu in millicores before the division. A limit the
// container does not set is the pod's own (pod-level resources), else
// the node's allocatable, from allocatable; a request it does not set
// is 0.
func ResourceValue(pod *corev1.Pod, container string, ref *corev1.ResourceFieldSelector, allocatable Allocatable) (string, error) {
	if ref.ContainerName != "" {
		container = ref.ContainerName
	}
	c := findContainer(pod, container)
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %s: no container %q", ref.Resource, container)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var name corev1.ResourceName
	var limit bool
	switch ref.Resource {
	case "limits.cpu", "limits.memory", "limits.ephemeral-storage":
		name, limit = corev1.ResourceName(ref.Resource[len("limits."):]), true
	case "requests.cpu", "requests.memory", "requests.ephemeral-storage":
		name = corev1.ResourceName(ref.Resource[len("requests."):])
	default:
		return "", fmt.Errorf("resourceFieldRef %q of container %q: %w", ref.Resource, container, ErrUnsupported)
	}
	var q resource.Quantity
	if limit {
		var ok bool
		if q, ok = c.Resources.Limits[name]; !ok {
			q, ok = podLevelLimit(pod, name)
		}
		if !ok {
			if allocatable == nil {
				return "", fmt.Errorf("resourceFieldRef %s of container %q: no limit set, and the node's allocatable is unknown", ref.Resource, container)
			}
			alloc, err := allocatable()
			if err != nil {
				return "", fmt.Errorf("resourceFieldRef %s of container %q: node allocatable: %w", ref.Resource, container, err)
			}
			if q, ok = alloc[name]; !ok {
				return "", fmt.Errorf("resourceFieldRef %s of container %q: no limit set, and the node's allocatable has no %s", ref.Resource, container, name)
			}
		}
	} else {
		q = c.Resources.Requests[name]
	}
	var n, d float64
	if name == corev1.ResourceCPU {
		n, d = float64(q.MilliValue()), float64(divisor.MilliValue())
	} else {
		n, d = float64(q.Value()), float64(divisor.Value())
	}
	if d <= 0 {
		return "", fmt.Errorf("resourceFieldRef %s of container %q: divisor %s: %w", ref.Resource, container, divisor.String(), errBadDivisor)
	}
	return strconv.FormatInt(int64(math.Ceil(n/d)), 10), nil
}

// podLevelLimit is the pod's own limit of name, which stands for a limit
// its container does not set when the pod sets one (PodLevelResources).
func podLevelLimit(pod *corev1.Pod, name corev1.ResourceName) (resource.Quantity, bool) {
	if pod.Spec.Resources == nil || !podtypes.IsPodLevelResource(name) {
		return resource.Quantity{}, false
	}
	q, ok := pod.Spec.Resources.Limits[name]
	return q, ok && !q.IsZero()
}

var errBadDivisor = errors.New("must be positive")

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
