package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// An emptyDir of medium Memory is a tmpfs of its sizeLimit, writable by
// the container, as under the kubelet.
func TestBinaryMemoryEmptyDir(t *testing.T) {
	h := newAgent(t)
	limit := resource.MustParse("16Mi")
	c := corev1.Container{
		Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command:      []string{"sh", "-c", `grep ' /m ' /proc/mounts | cut -d' ' -f3; df -k /m | tail -n 1 | awk '{print $2}'; echo x > /m/f && echo wrote`},
		VolumeMounts: []corev1.VolumeMount{{Name: "m", MountPath: "/m"}},
	}
	pod := testPod("tmpfs", c)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Volumes = []corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}}
	h.writeManifest(pod)
	p := h.waitPod("tmpfs", "terminated", 60*time.Second, terminated("main"))
	if got, want := h.containerLog(p, "main"), "tmpfs\n16384\nwrote\n"; got != want {
		t.Errorf("the container saw:\n%s\nwant:\n%s", got, want)
	}
}
