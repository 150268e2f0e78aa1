package cgroups

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ctr is a container with requests and limits given as cpu, memory
// pairs; "" leaves a value out.
func ctr(name, reqCPU, reqMem, limCPU, limMem string) corev1.Container {
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: rl(reqCPU, reqMem), Limits: rl(limCPU, limMem)}}
}

// podLevel is pod-level resources given as cpu, memory pairs; "" leaves
// a value out.
func podLevel(reqCPU, reqMem, limCPU, limMem string) *corev1.ResourceRequirements {
	r := ctr("", reqCPU, reqMem, limCPU, limMem).Resources
	return &r
}

func sidecar(c corev1.Container) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestPodLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want limits
	}{{
		name: "BestEffort: the fewest shares, nothing else",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", "", "", "", "")}},
		want: limits{shares: 2},
	}, {
		name: "Guaranteed: sums of the containers",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", "500m", "64Mi", "500m", "64Mi"), ctr("b", "250m", "32Mi", "250m", "32Mi")}},
		want: limits{shares: 768, quota: 75000, memory: 96 << 20},
	}, {
		name: "Burstable with requests only: shares",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", "100m", "16Mi", "", "")}},
		want: limits{shares: 102},
	}, {
		name: "Burstable, every container limits both: quota and memory",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", "100m", "16Mi", "1", "64Mi"), ctr("b", "100m", "16Mi", "200m", "32Mi")}},
		want: limits{shares: 204, quota: 120000, memory: 96 << 20},
	}, {
		name: "Burstable, one container without a CPU limit: no quota",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", "100m", "16Mi", "1", "64Mi"), ctr("b", "100m", "16Mi", "", "32Mi")}},
		want: limits{shares: 204, memory: 96 << 20},
	}, {
		name: "Burstable, an init container without a memory limit: no memory limit",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i", "100m", "", "1", "")},
			Containers:     []corev1.Container{ctr("a", "100m", "16Mi", "1", "64Mi")}},
		want: limits{shares: 102, quota: 100000},
	}, {
		name: "an init container larger than the app containers sets the peak",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i", "1", "16Mi", "2", "256Mi")},
			Containers:     []corev1.Container{ctr("a", "100m", "16Mi", "1", "64Mi")}},
		want: limits{shares: 1024, quota: 200000, memory: 256 << 20},
	}, {
		name: "sidecars run beside the app containers and the later init containers",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				sidecar(ctr("s", "100m", "16Mi", "100m", "32Mi")),
				ctr("i", "1", "16Mi", "1", "64Mi")},
			Containers: []corev1.Container{ctr("a", "200m", "16Mi", "200m", "32Mi")}},
		// Peak: init i with sidecar s (1100m, 96Mi) beats s with a (300m, 64Mi).
		want: limits{shares: 1126, quota: 110000, memory: 96 << 20},
	}, {
		name: "the pod's overhead on top",
		spec: corev1.PodSpec{
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
			Containers: []corev1.Container{ctr("a", "500m", "64Mi", "500m", "64Mi")}},
		want: limits{shares: 614, quota: 60000, memory: 72 << 20},
	}, {
		name: "pod-level resources replace the containers' sums (Guaranteed at the pod level)",
		spec: corev1.PodSpec{
			Resources:  podLevel("1", "256Mi", "1", "256Mi"),
			Containers: []corev1.Container{ctr("a", "", "", "", ""), ctr("b", "100m", "16Mi", "", "")}},
		want: limits{shares: 1024, quota: 100000, memory: 256 << 20},
	}, {
		name: "a pod-level memory limit limits the pod whose containers set none",
		spec: corev1.PodSpec{
			Resources:  podLevel("", "", "", "128Mi"),
			Containers: []corev1.Container{ctr("a", "200m", "16Mi", "", "")}},
		want: limits{shares: 204, memory: 128 << 20},
	}, {
		name: "pod-level resources and the overhead on top",
		spec: corev1.PodSpec{
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
			Resources:  podLevel("500m", "64Mi", "500m", "64Mi"),
			Containers: []corev1.Container{ctr("a", "", "", "", "")}},
		want: limits{shares: 614, quota: 60000, memory: 72 << 20},
	}, {
		name: "a tiny CPU limit gets the smallest quota",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", "1m", "1Mi", "1m", "1Mi")}},
		want: limits{shares: 2, quota: 1000, memory: 1 << 20},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podLimits(&corev1.Pod{Spec: tc.spec}); got != tc.want {
				t.Errorf("podLimits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSharesToWeight(t *testing.T) {
	for shares, want := range map[uint64]uint64{2: 1, 1024: 39, 262144: 10000} {
		if got := sharesToWeight(shares); got != want {
			t.Errorf("sharesToWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}
