package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestOOMScoreAdj(t *testing.T) {
	const capacity = 1000 << 20 // 1000 MiB: a request of 1 MiB is one point
	res := func(memReq, memLim, cpuReq, cpuLim string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
		for _, s := range []struct {
			l    corev1.ResourceList
			name corev1.ResourceName
			v    string
		}{{r.Requests, corev1.ResourceMemory, memReq}, {r.Limits, corev1.ResourceMemory, memLim},
			{r.Requests, corev1.ResourceCPU, cpuReq}, {r.Limits, corev1.ResourceCPU, cpuLim}} {
			if s.v != "" {
				s.l[s.name] = resource.MustParse(s.v)
			}
		}
		return r
	}
	app := func(name string, r corev1.ResourceRequirements) corev1.Container {
		return corev1.Container{Name: name, Resources: r}
	}
	sidecar := func(name string, r corev1.ResourceRequirements) corev1.Container {
		c := app(name, r)
		c.RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
		return c
	}
	for _, tc := range []struct {
		name      string
		pod       corev1.Pod
		container string // the app container by default, "init" for InitContainers[0]
		capacity  int64
		want      int64
	}{{
		name: "Guaranteed",
		pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("64Mi", "64Mi", "1", "1"))}}},
		want: -997,
	}, {
		name: "BestEffort",
		pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("", "", "", ""))}}},
		want: 1000,
	}, {
		name: "Burstable: by the share of memory requested",
		pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("250Mi", "", "", ""))}}},
		want: 750,
	}, {
		name: "Burstable without a memory request: 999, never BestEffort's 1000",
		pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("", "", "100m", ""))}}},
		want: 999,
	}, {
		name: "Burstable asking for nearly everything: no lower than 3",
		pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("999Mi", "", "", ""))}}},
		want: 3,
	}, {
		name:     "Burstable, capacity unknown",
		pod:      corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app("a", res("250Mi", "", "", ""))}}},
		capacity: -1,
		want:     999,
	}, {
		name: "node-critical static pod, even BestEffort",
		pod: corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}},
			Spec:       corev1.PodSpec{PriorityClassName: "system-node-critical", Containers: []corev1.Container{app("a", res("", "", "", ""))}},
		},
		want: -997,
	}, {
		name: "node-critical by priority",
		pod: corev1.Pod{Spec: corev1.PodSpec{Priority: ptr(int32(2000001000)), PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{app("a", res("250Mi", "", "", ""))}}},
		want: -997,
	}, {
		name: "cluster-critical is not node-critical",
		pod: corev1.Pod{Spec: corev1.PodSpec{Priority: ptr(int32(2000000000)), PriorityClassName: "system-cluster-critical",
			Containers: []corev1.Container{app("a", res("250Mi", "", "", ""))}}},
		want: 750,
	}, {
		name: "the node-critical class without a critical priority is not",
		pod: corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{app("a", res("250Mi", "", "", ""))}}},
		want: 750,
	}, {
		name: "sidecar scores no higher than the app container of the smallest request",
		pod: corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("init", res("10Mi", "", "", ""))},
			Containers:     []corev1.Container{app("a", res("500Mi", "", "", "")), app("b", res("200Mi", "", "", ""))},
		}},
		container: "init",
		want:      800,
	}, {
		name: "sidecar requesting more than the app containers keeps its own",
		pod: corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("init", res("600Mi", "", "", ""))},
			Containers:     []corev1.Container{app("a", res("100Mi", "", "", ""))},
		}},
		container: "init",
		want:      400,
	}, {
		name: "an ordinary init container keeps its own",
		pod: corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{app("init", res("10Mi", "", "", ""))},
			Containers:     []corev1.Container{app("a", res("500Mi", "", "", ""))},
		}},
		container: "init",
		want:      990,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &tc.pod.Spec.Containers[0]
			if tc.container == "init" {
				c = &tc.pod.Spec.InitContainers[0]
			}
			capacity := int64(capacity)
			if tc.capacity != 0 {
				capacity = max(tc.capacity, 0)
			}
			if got := oomScoreAdj(&tc.pod, c, capacity); got != tc.want {
				t.Errorf("oomScoreAdj = %d, want %d", got, tc.want)
			}
		})
	}
}
