package eviction

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Whatever the thresholds, a pod over a storage limit of its own is
// evicted at once with the kubelet's message: an emptyDir on disk over its
// sizeLimit, the pod over its containers' limits together, a container
// over its own. A Memory emptyDir, a pod within its limits and a static
// pod are left alone.
func TestLocalStorageLimitsEvict(t *testing.T) {
	w := newWorld(t)
	m := w.manager(Options{})
	withDir := func(name string, medium corev1.StorageMedium, limit string, usedMi int64) *corev1.Pod {
		p := w.pod(name, 1, 0, 0)
		q := resource.MustParse(limit)
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, SizeLimit: &q}}}}
		u := w.usage[p.UID]
		u.Volumes = map[string]int64{"scratch": usedMi << 20}
		w.usage[p.UID] = u
		return p
	}
	withLimit := func(name, limit string, layerMi, dirMi int64) *corev1.Pod {
		p := w.pod(name, 1, 0, 0)
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		w.usage[p.UID] = PodUsage{ContainerEphemeral: map[string]int64{"main": layerMi << 20}, Volumes: map[string]int64{"scratch": dirMi << 20}}
		return p
	}
	withDir("dir-over", "", "1Mi", 4)
	withDir("dir-within", "", "8Mi", 4)
	withDir("memory-dir", corev1.StorageMediumMemory, "1Mi", 4)
	static := withDir("static", "", "1Mi", 4)
	static.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}
	withLimit("pod-over", "10Mi", 6, 6)        // 12Mi together
	withLimit("container-over", "10Mi", 11, 0) // its own layer and logs
	withLimit("limits-kept", "10Mi", 4, 4)

	m.synchronize(context.Background())
	want := []string{
		`dir-over 0 Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `,
		"pod-over 0 Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. ",
		`container-over 0 Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. `,
	}
	if got := w.takeEvicted(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("evicted\n %q\nwant\n %q", got, want)
	}
}

// A container over its own limit is named when the pod as a whole is
// within the sum of its containers' limits.
func TestContainerOverItsOwnStorageLimit(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("10Mi")}}},
		{Name: "b", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("100Mi")}}},
	}}}
	u := PodUsage{ContainerEphemeral: map[string]int64{"a": 11 << 20, "b": 1 << 20}}
	if got, want := overLimit(p, u), `Container a exceeded its local ephemeral storage limit "10Mi". `; got != want {
		t.Errorf("overLimit = %q, want %q", got, want)
	}
}

// A pass measures the pods once, though both a pod's own limit and a
// threshold ask for their usage.
func TestAPassMeasuresOnce(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard})
	p := w.pod("limited", 200, 0, 0)
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
	w.memory.Available = 50 << 20
	m.synchronize(context.Background())
	if got := w.takeEvicted(); len(got) != 1 {
		t.Fatalf("evicted %v, want the pod, for memory", got)
	}
	if w.measures != 1 {
		t.Errorf("the pass measured the pods %d times, want 1", w.measures)
	}
}
