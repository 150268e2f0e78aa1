package podtypes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
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
	tests := []struct {
		name string
		res  []corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"nothing set", []corev1.ResourceRequirements{{}}, corev1.PodQOSBestEffort},
		{"limits only (requests default to them)", []corev1.ResourceRequirements{{Limits: rl("1", "1Gi")}}, corev1.PodQOSGuaranteed},
		{"requests equal limits", []corev1.ResourceRequirements{{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}}, corev1.PodQOSGuaranteed},
		{"requests below limits", []corev1.ResourceRequirements{{Requests: rl("500m", "1Gi"), Limits: rl("1", "1Gi")}}, corev1.PodQOSBurstable},
		{"memory limit only", []corev1.ResourceRequirements{{Limits: rl("", "1Gi")}}, corev1.PodQOSBurstable},
		{"one container without", []corev1.ResourceRequirements{{Limits: rl("1", "1Gi")}, {}}, corev1.PodQOSBurstable},
		{"zero quantities count as unset", []corev1.ResourceRequirements{{Requests: rl("0", "0")}}, corev1.PodQOSBestEffort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			for _, r := range tt.res {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c", Resources: r})
			}
			if got := QOSClass(pod); got != tt.want {
				t.Errorf("QOSClass = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("an init container counts", func(t *testing.T) {
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: rl("", "1Mi")}}},
			Containers:     []corev1.Container{{Name: "c"}},
		}}
		if got := QOSClass(pod); got != corev1.PodQOSBurstable {
			t.Errorf("QOSClass = %s, want Burstable", got)
		}
	})
	t.Run("pod-level resources decide when set", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			pod       corev1.ResourceRequirements
			container corev1.ResourceRequirements
			want      corev1.PodQOSClass
		}{
			{"pod-level requests equal limits, containers set nothing", corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}, corev1.ResourceRequirements{}, corev1.PodQOSGuaranteed},
			{"pod-level limits only (not defaulted here)", corev1.ResourceRequirements{Limits: rl("1", "1Gi")}, corev1.ResourceRequirements{}, corev1.PodQOSBurstable},
			{"pod-level cpu only, containers Guaranteed", corev1.ResourceRequirements{Requests: rl("1", ""), Limits: rl("1", "")}, corev1.ResourceRequirements{Limits: rl("1", "1Gi")}, corev1.PodQOSBurstable},
			{"pod-level hugepages only", corev1.ResourceRequirements{Limits: corev1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}}, corev1.ResourceRequirements{Limits: rl("1", "1Gi")}, corev1.PodQOSBestEffort},
			{"pod-level resources of no kind managed there", corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}}, corev1.ResourceRequirements{Limits: rl("1", "1Gi")}, corev1.PodQOSGuaranteed},
		} {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Resources: &tc.pod, Containers: []corev1.Container{{Name: "c", Resources: tc.container}}}}
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("%s: QOSClass = %s, want %s", tc.name, got, tc.want)
			}
		}
	})
	t.Run("the admitted class wins", func(t *testing.T) {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
		pod.Status.QOSClass = corev1.PodQOSBurstable
		if got := QOSClass(pod); got != corev1.PodQOSBurstable {
			t.Errorf("QOSClass = %s, want the status's Burstable", got)
		}
	})
}
