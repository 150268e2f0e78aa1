package volumes

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// An emptyDir's usage counts what its files take on the disk, a hard
// link once, and stops early once past the bound.
func TestEmptyDirUsage(t *testing.T) {
	m, _ := newManager(t)
	pod := podWith([]corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/s"}}})
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup(pod.UID) })
	dir := m.EmptyDirPath(pod.UID, "scratch")
	empty, err := m.EmptyDirUsage(pod.UID, "scratch", 0)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i) // not a hole
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "a/b/two"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "one"), filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	used, err := m.EmptyDirUsage(pod.UID, "scratch", 0)
	if err != nil {
		t.Fatal(err)
	}
	if grown := used - empty; grown < 2<<20 || grown > 2<<20+64<<10 {
		t.Errorf("usage grew by %d bytes, want 2 MiB (a hard link counted once) and a few blocks", grown)
	}
	capped, err := m.EmptyDirUsage(pod.UID, "scratch", 512<<10)
	if err != nil || capped <= 512<<10 || capped >= used {
		t.Errorf("with a bound of 512 KiB: %d, %v; want the walk stopped past the bound, before the whole", capped, err)
	}
	if _, err := m.EmptyDirUsage(pod.UID, "../x", 0); err == nil {
		t.Error("a volume name with a slash was walked")
	}
}
