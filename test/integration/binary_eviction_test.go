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

// A pod whose container writes past its ephemeral-storage limit, to its
// writable layer or to its log, is evicted as under the kubelet, with its
// message; a pod within its limit runs on.
func TestBinaryEphemeralStorageLimitEviction(t *testing.T) {
	h := newConnectedAgent(t, "--eviction-monitoring-interval=2s")
	waitNode(t, "Ready", 30*time.Second, isReady)
	spec := func(name, limit, script string) *corev1.Pod {
		c := shContainer("main", script)
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		return h.apiPodSpec(name, c)
	}
	layer := h.createAPIPod(spec("layer", "2Mi", "dd if=/dev/urandom of=/tmp/fill bs=1024 count=4096; "+sleepForever))
	logs := h.createAPIPod(spec("logs", "2Mi", "head -c 4194304 /dev/zero | tr '\\0' 'x' | fold -w 1000; "+sleepForever))
	within := h.createAPIPod(spec("within", "64Mi", "dd if=/dev/urandom of=/tmp/fill bs=1024 count=1024; "+sleepForever))

	const want = "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. "
	for _, p := range []*corev1.Pod{layer, logs} {
		h.waitAPIPod(p.Name, "evicted", 60*time.Second, func(p2 *corev1.Pod) bool {
			return p2 != nil && p2.UID == p.UID && p2.Status.Phase == corev1.PodFailed && p2.Status.Reason == "Evicted" && p2.Status.Message == want
		})
	}
	if p := h.waitAPIPod(within.Name, "running", 30*time.Second, apiPodRunning(within.UID)); p.Status.Reason != "" {
		t.Errorf("the pod within its limit: reason %q, want none", p.Status.Reason)
	}
}
