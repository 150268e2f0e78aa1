package volumes

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMemorySize(t *testing.T) {
	mem := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	always := corev1.ContainerRestartPolicyAlways
	gi := resource.MustParse("1Gi")
	for _, tc := range []struct {
		name        string
		sizeLimit   string
		init, app   []corev1.Container
		allocatable *resource.Quantity
		want        int64
	}{
		{name: "nothing known", app: []corev1.Container{{Name: "a"}}},
		{name: "allocatable only", app: []corev1.Container{{Name: "a"}}, allocatable: &gi, want: 1 << 30},
		{name: "sizeLimit below allocatable", sizeLimit: "64Mi", allocatable: &gi, want: 64 << 20},
		{name: "sizeLimit above allocatable", sizeLimit: "2Gi", allocatable: &gi, want: 1 << 30},
		{name: "the pod's limit: app containers added up",
			app: []corev1.Container{{Name: "a", Resources: mem("100Mi")}, {Name: "b", Resources: mem("28Mi")}}, want: 128 << 20},
		{name: "a container without a limit: no pod limit",
			app: []corev1.Container{{Name: "a", Resources: mem("100Mi")}, {Name: "b"}}, allocatable: &gi, want: 1 << 30},
		{name: "an init container larger than the app",
			init: []corev1.Container{{Name: "i", Resources: mem("300Mi")}},
			app:  []corev1.Container{{Name: "a", Resources: mem("100Mi")}}, want: 300 << 20},
		{name: "a sidecar counts beside the app and later inits",
			init: []corev1.Container{{Name: "s", Resources: mem("50Mi"), RestartPolicy: &always}, {Name: "i", Resources: mem("100Mi")}},
			app:  []corev1.Container{{Name: "a", Resources: mem("60Mi")}}, want: 150 << 20},
		{name: "sizeLimit below the pod's limit", sizeLimit: "10Mi",
			app: []corev1.Container{{Name: "a", Resources: mem("100Mi")}}, want: 10 << 20},
		{name: "a zero sizeLimit is no bound", sizeLimit: "0", allocatable: &gi, want: 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &corev1.Volume{Name: "m", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
			if tc.sizeLimit != "" {
				q := resource.MustParse(tc.sizeLimit)
				v.EmptyDir.SizeLimit = &q
			}
			pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: tc.init, Containers: tc.app}}
			if got := memorySize(pod, v.EmptyDir.SizeLimit, tc.allocatable); got != tc.want {
				t.Errorf("size %d, want %d", got, tc.want)
			}
		})
	}
}

// A Memory emptyDir is a tmpfs of the computed size, mounted once however
// often the pod syncs, and gone with the pod.
func TestMemoryEmptyDir(t *testing.T) {
	needMounts(t)
	m, _ := newManager(t)
	limit := resource.MustParse("8Mi")
	pod := podWith([]corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}},
		corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "m", MountPath: "/m"}}})
	for range 2 {
		if _, err := m.Setup(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	path := m.EmptyDirPath(pod.UID, "m")
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(real, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != unix.TMPFS_MAGIC || int64(st.Blocks)*st.Bsize != 8<<20 { // #nosec G115 -- a block count
		t.Errorf("statfs: type %#x, %d bytes; want a tmpfs of 8 MiB", st.Type, int64(st.Blocks)*st.Bsize) // #nosec G115 -- a block count
	}
	if n := len(mountsMentioning(t, real)); n != 1 {
		t.Errorf("%d mounts on the volume after two syncs, want 1", n)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("volume mode: %v, %v; want 0777, sticky", fi.Mode(), err)
	}
	if err := m.Cleanup(pod.UID); err != nil {
		t.Fatal(err)
	}
	if n := len(mountsMentioning(t, real)); n != 0 {
		t.Errorf("%d mounts left after the cleanup", n)
	}
}

// A subPath that does not exist in a Memory emptyDir of a pod with an
// fsGroup is made as the kubelet makes it (the upstream EmptyDir
// conformance test reads it): the volume's group, setgid and sticky,
// writable by all.
func TestMemoryEmptyDirSubPathWithFSGroup(t *testing.T) {
	needMounts(t)
	m, _ := newManager(t)
	pod := podWith([]corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
		corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "m", MountPath: "/m", SubPath: "test-sub"}}})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: new(int64(123))}
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup(pod.UID) })
	fi, err := os.Stat(filepath.Join(m.EmptyDirPath(pod.UID, "m"), "test-sub"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().String(); got != "dgtrwxrwxrwx" || fileGID(fi) != 123 {
		t.Errorf("the subPath: mode %s gid %d, want dgtrwxrwxrwx and 123", got, fileGID(fi))
	}
}
