package cgroups

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// CFS period, and the bounds the kernel puts on shares and quota.
const (
	cpuPeriod = 100000 // 100 ms
	minQuota  = 1000   // 1 ms
	minShares = 2
	maxShares = 262144
)

// limits are what a cgroup is given. Zero quota or memory: unlimited.
type limits struct {
	shares uint64
	quota  int64 // µs per cpuPeriod
	memory int64 // bytes
}

// podLimits are the pod cgroup's limits, from the pod's totals: shares
// from its CPU requests (2 for a BestEffort pod), a quota from its CPU
// limits only when every container has one or the pod has one of its
// own, a memory limit likewise.
func podLimits(pod *corev1.Pod) limits {
	class := podtypes.QOSClass(pod)
	if class == corev1.PodQOSBestEffort {
		return limits{shares: minShares}
	}
	l := limits{shares: milliCPUToShares(podTotal(pod, corev1.ResourceCPU, requests).milliValue())}
	allCPU, allMemory := true, true
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			allCPU = allCPU && !cs[i].Resources.Limits.Cpu().IsZero()
			allMemory = allMemory && !cs[i].Resources.Limits.Memory().IsZero()
		}
	}
	if podtypes.HasPodLevelResources(pod) {
		allCPU = allCPU || !pod.Spec.Resources.Limits.Cpu().IsZero()
		allMemory = allMemory || !pod.Spec.Resources.Limits.Memory().IsZero()
	}
	if class == corev1.PodQOSGuaranteed || allCPU {
		l.quota = milliCPUToQuota(podTotal(pod, corev1.ResourceCPU, limitsOf).milliValue())
	}
	if class == corev1.PodQOSGuaranteed || allMemory {
		l.memory = podTotal(pod, corev1.ResourceMemory, limitsOf).value()
	}
	return l
}

// requests and limitsOf pick one side of a pod's or container's resources.
func requests(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }
func limitsOf(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits }

// podTotal is what the pod needs of a resource at its peak: its own
// pod-level amount when it sets one (PodLevelResources), else the app
// containers and sidecars together, or an init container together with
// the sidecars started before it, whichever is more; plus the pod's
// overhead.
func podTotal(pod *corev1.Pod, res corev1.ResourceName, of func(*corev1.ResourceRequirements) corev1.ResourceList) *resourceSum {
	if podtypes.HasPodLevelResources(pod) {
		if q, ok := of(pod.Spec.Resources)[res]; ok {
			total := resourceSum{milli: q.MilliValue()}
			total.add(pod.Spec.Overhead, res)
			return &total
		}
	}
	var running, sidecars, initPeak resourceSum
	for i := range pod.Spec.Containers {
		running.add(of(&pod.Spec.Containers[i].Resources), res)
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podtypes.IsSidecar(c) {
			running.add(of(&c.Resources), res)
			sidecars.add(of(&c.Resources), res)
			initPeak.atLeast(sidecars)
			continue
		}
		during := sidecars
		during.add(of(&c.Resources), res)
		initPeak.atLeast(during)
	}
	running.atLeast(initPeak)
	running.add(pod.Spec.Overhead, res)
	return &running
}

// resourceSum adds quantities of one resource in milli-units, exact for
// CPU and for memory alike.
type resourceSum struct{ milli int64 }

func (s *resourceSum) add(l corev1.ResourceList, res corev1.ResourceName) {
	if q, ok := l[res]; ok {
		s.milli += q.MilliValue()
	}
}

func (s *resourceSum) atLeast(o resourceSum) { s.milli = max(s.milli, o.milli) }

// milliValue is the sum in thousandths.
func (s *resourceSum) milliValue() int64 { return s.milli }

// value is the sum in units, rounded up.
func (s *resourceSum) value() int64 { return (s.milli + 999) / 1000 }

func milliCPUToShares(milli int64) uint64 {
	if milli <= 0 {
		return minShares
	}
	return uint64(min(max(milli*1024/1000, minShares), maxShares)) // #nosec G115 -- clamped to [2, 262144]
}

func milliCPUToQuota(milli int64) int64 {
	if milli <= 0 {
		return 0
	}
	return max(milli*cpuPeriod/1000, minQuota)
}
