package allocation

import (
	corev1 "k8s.io/api/core/v1"
)

// Resources are the resources a resize changes in place.
var Resources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// CPUMemory is the part of r that a resize changes: its cpu and memory,
// requests and limits.
func CPUMemory(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: pick(r.Requests), Limits: pick(r.Limits)}
}

func pick(l corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for _, name := range Resources {
		if q, ok := l[name]; ok {
			if out == nil {
				out = corev1.ResourceList{}
			}
			out[name] = q
		}
	}
	return out
}

// same reports whether a and b ask the same cpu and memory.
func same(a, b corev1.ResourceRequirements) bool {
	return sameList(a.Requests, b.Requests) && sameList(a.Limits, b.Limits)
}

func sameList(a, b corev1.ResourceList) bool {
	for _, name := range Resources {
		qa, oka := a[name]
		qb, okb := b[name]
		if oka != okb || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// Overlay is r with the cpu and memory, requests and limits, of cpuMemory
// (where cpuMemory has none, r has none).
func Overlay(r, cpuMemory corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *r.DeepCopy()
	out.Requests = replaced(r.Requests, cpuMemory.Requests)
	out.Limits = replaced(r.Limits, cpuMemory.Limits)
	return out
}

// replaced is l with its cpu and memory those of alloc.
func replaced(l, alloc corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range l {
		out[name] = q
	}
	for _, name := range Resources {
		delete(out, name)
		if q, ok := alloc[name]; ok {
			out[name] = q
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
