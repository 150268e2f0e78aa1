package eviction

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// localStorage evicts, whatever the thresholds, the pods over a limit of
// their own on local storage, as the kubelet does first in each of its
// eviction passes: an emptyDir on disk over its sizeLimit, the pod's
// emptyDirs and containers together over the sum of its containers'
// ephemeral-storage limits, or a container's writable layer and logs
// over its own limit. (A Memory emptyDir is a tmpfs of its size: the
// kernel refuses writes past it.) It reports whether it evicted any.
func (m *Manager) localStorage(ctx context.Context, p *pass) bool {
	var limited []*corev1.Pod
	for _, pod := range p.pods {
		if !podtypes.IsCritical(pod) && hasStorageLimit(pod) {
			limited = append(limited, pod)
		}
	}
	if len(limited) == 0 {
		return false
	}
	usage, err := p.measure(ctx)
	if err != nil {
		m.opts.Logger.Error(err, "Eviction: measuring the pods' local storage")
		return false
	}
	evicted := false
	for _, pod := range limited {
		why := overLimit(pod, usage[pod.UID])
		if why == "" || !m.opts.Evict(pod, why, 0) {
			continue
		}
		evicted = true
		m.metrics.evicted(signalLocalStorage)
		m.opts.Logger.Info("Evicted a pod over its local storage limit", "pod", podtypes.PodFullName(pod), "podUID", pod.UID, "message", why)
	}
	return evicted
}

// signalLocalStorage labels the evictions for a pod's own storage limits
// in the evictions metric.
const signalLocalStorage = "localStorage"

func hasStorageLimit(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if DiskEmptyDir(v) && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Sign() > 0 {
			return true
		}
	}
	_, ok := podStorageLimit(pod)
	return ok
}

// DiskEmptyDir tells whether the volume is an emptyDir on the node's
// disk, whose usage counts as the pod's local storage.
func DiskEmptyDir(v corev1.Volume) bool {
	return v.EmptyDir != nil && v.EmptyDir.Medium != corev1.StorageMediumMemory
}

// overLimit is the kubelet's message for the first limit of the pod its
// usage is over, or "".
func overLimit(pod *corev1.Pod, u PodUsage) string {
	for _, v := range pod.Spec.Volumes {
		if !DiskEmptyDir(v) || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0 {
			continue
		}
		if u.Volumes[v.Name] > v.EmptyDir.SizeLimit.Value() {
			return fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", v.Name, v.EmptyDir.SizeLimit.String())
		}
	}
	if limit, ok := podStorageLimit(pod); ok {
		if u.localUsage() > limit.Value() {
			return fmt.Sprintf("Pod ephemeral local storage usage exceeds the total limit of containers %s. ", limit.String())
		}
	}
	for _, c := range pod.Spec.Containers {
		limit, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]
		if ok && u.ContainerEphemeral[c.Name] > limit.Value() {
			return fmt.Sprintf("Container %s exceeded its local ephemeral storage limit %q. ", c.Name, limit.String())
		}
	}
	return ""
}

// podStorageLimit is the pod's ephemeral-storage limit, the sum of its
// long-running containers', if any of them has one.
func podStorageLimit(pod *corev1.Pod) (*resource.Quantity, bool) {
	sum := resource.NewQuantity(0, resource.BinarySI)
	found := false
	for _, c := range longRunning(pod) {
		if l, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
			sum.Add(l)
			found = true
		}
	}
	return sum, found
}

// localUsage is what a pod uses of local storage: its emptyDirs on disk
// and its containers' writable layers and logs.
func (u PodUsage) localUsage() int64 {
	var total int64
	for _, v := range u.Volumes {
		total += v
	}
	for _, c := range u.ContainerEphemeral {
		total += c
	}
	return total
}
