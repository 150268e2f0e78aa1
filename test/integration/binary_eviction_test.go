package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A pod whose emptyDir grows past its sizeLimit is evicted as under the
// kubelet: Failed, reason Evicted, the kubelet's message, its containers
// stopped. A pod within its limit runs on.
func TestBinaryEmptyDirSizeLimitEviction(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	limit := resource.MustParse("1Mi")
	spec := func(name, script string) *corev1.Pod {
		c := shContainer("main", script)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		pod := h.apiPodSpec(name, c)
		pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &limit}}}}
		return pod
	}
	hog := h.createAPIPod(spec("hog", "dd if=/dev/urandom of=/scratch/fill bs=1024 count=2048; "+sleepForever))
	small := h.createAPIPod(spec("small", "dd if=/dev/urandom of=/scratch/fill bs=1024 count=256; "+sleepForever))

	const want = `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	h.waitAPIPod(hog.Name, "evicted", 60*time.Second, func(p *corev1.Pod) bool {
		return p != nil && p.UID == hog.UID && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" && p.Status.Message == want
	})
	waitEvent(t, hog.Namespace, "involvedObject.kind=Pod,involvedObject.name="+hog.Name+",reason=Evicted")
	deadline := time.Now().Add(30 * time.Second)
	for len(h.containers("hog", true)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the evicted pod's containers still run")
		}
		time.Sleep(200 * time.Millisecond)
	}
	p := h.waitAPIPod(small.Name, "running", 30*time.Second, apiPodRunning(small.UID))
	if p.Status.Reason != "" {
		t.Errorf("the pod within its limit: reason %q, want none", p.Status.Reason)
	}
}
