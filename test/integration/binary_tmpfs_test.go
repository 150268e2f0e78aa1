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

// A Secret volume, a projected one with a service account token, and a
// downwardAPI one are each a tmpfs the size of the pod's memory limit, as
// under the kubelet: their content never reaches the node's disk.
func TestBinarySecretVolumesInMemory(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	createSecret(t, "tmpfs-secret", map[string]string{"password": "s3cret"})
	c := shContainer("main", sleepForever)
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "s", MountPath: "/s"}, {Name: "p", MountPath: "/p"}, {Name: "d", MountPath: "/d"}}
	pod := h.apiPodSpec("secret-tmpfs", c)
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tmpfs-secret"}}},
		{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
		{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
	}
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(created.UID))
	script := `for d in /s /p /d; do echo "$d $(grep " $d " /proc/mounts | cut -d' ' -f3) $(df -k $d | tail -n 1 | awk '{print $2}')"; done; ` +
		`cat /s/password; echo; test -s /p/token && echo token`
	got := h.exec("secret-tmpfs", "main", "sh", "-c", script)
	if want := "/s tmpfs 65536\n/p tmpfs 65536\n/d tmpfs 65536\ns3cret\ntoken\n"; got != want {
		t.Errorf("the container saw:\n%s\nwant:\n%s", got, want)
	}
}
