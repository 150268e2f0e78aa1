package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/host"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// reservable are the resources --system-reserved and --kube-reserved may
// hold back from pods.
var reservable = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, "pid"}

// ValidateReserved checks a --system-reserved or --kube-reserved value.
func ValidateReserved(flag string, r corev1.ResourceList) error {
	for _, name := range slices.Sorted(maps.Keys(r)) {
		if !slices.Contains(reservable, name) {
			return fmt.Errorf("%s: %q cannot be reserved (only %v)", flag, name, reservable)
		}
		if q := r[name]; q.Sign() < 0 {
			return fmt.Errorf("%s: %s=%s is negative", flag, name, q.String())
		}
	}
	return nil
}

// capacity is what the machine has: CPUs, memory, the node filesystem,
// huge pages, and how many pods the agent takes.
func capacity(m Machine, nodefs host.FSStats, maxPods int32) corev1.ResourceList {
	c := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.CPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(m.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(nodefs.Capacity, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	for size, bytes := range m.HugePages {
		c[hugePageResource(size)] = *resource.NewQuantity(bytes, resource.BinarySI)
	}
	return c
}

// PodsMemory is the memory the pods may take together: the machine's
// memory less what is reserved (the limit the kubelet gives its kubepods
// cgroup). The hard memory.available threshold is kept within it.
func PodsMemory(m Machine, reserved []corev1.ResourceList) int64 {
	a := allocatable(capacity(m, host.FSStats{}, 0), reserved, nil)
	return a.Memory().Value()
}

// allocatable is what pods may have: the capacity less what the system
// and the node's own daemons keep, less the hard eviction thresholds of
// memory and the node filesystem (what the node must keep free to stay
// healthy). Pages reserved as huge pages are not ordinary memory; the
// kernel already counts them out of MemTotal's free share but not of
// MemTotal, so they come off memory too. Nothing goes below zero.
func allocatable(capacity corev1.ResourceList, reserved []corev1.ResourceList, thresholds eviction.Thresholds) corev1.ResourceList {
	a := capacity.DeepCopy()
	sub := func(name corev1.ResourceName, q resource.Quantity) {
		v, ok := a[name]
		if !ok {
			return
		}
		v.Sub(q)
		if v.Sign() < 0 {
			v = *resource.NewQuantity(0, v.Format)
		}
		a[name] = v
	}
	for _, r := range reserved {
		for name, q := range r {
			sub(name, q)
		}
	}
	mem := capacity[corev1.ResourceMemory]
	sub(corev1.ResourceMemory, *resource.NewQuantity(thresholds.Bound(eviction.SignalMemoryAvailable, mem.Value()), resource.BinarySI))
	disk := capacity[corev1.ResourceEphemeralStorage]
	sub(corev1.ResourceEphemeralStorage, *resource.NewQuantity(thresholds.Bound(eviction.SignalNodeFSAvailable, disk.Value()), resource.BinarySI))
	for name, q := range capacity {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			sub(corev1.ResourceMemory, q)
		}
	}
	return a
}
