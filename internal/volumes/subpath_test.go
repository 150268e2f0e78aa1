package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// needMounts skips tests that bind-mount, which needs root (CAP_SYS_ADMIN).
func needMounts(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("subPath bind mounts need root")
	}
}

// mountsMentioning lists the lines of /proc/self/mountinfo whose source
// root or mount point is path or lies beneath it.
func mountsMentioning(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		for _, p := range f[3:5] {
			if p == path || strings.HasPrefix(p, path+"/") {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// cleanupPod unmounts and removes what Setup made, even if the test failed
// halfway.
func cleanupPod(t *testing.T, m *Manager, pod *corev1.Pod) {
	t.Cleanup(func() {
		if err := m.Cleanup(pod.UID); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
	})
}

func subPathPod(vol corev1.Volume, subPath string) *corev1.Pod {
	return podWith([]corev1.Volume{vol},
		corev1.Container{Name: "victim", VolumeMounts: []corev1.VolumeMount{{Name: vol.Name, MountPath: "/mnt", SubPath: subPath}}})
}

func canaryDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "host-secrets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "canary"), []byte("canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkCanary(t *testing.T, dir string) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dir, "canary")); err != nil || string(got) != "canary" {
		t.Errorf("canary = %q, %v; want it unchanged", got, err)
	}
	if lines := mountsMentioning(t, dir); len(lines) > 0 {
		t.Errorf("the host directory is mounted:\n%s", strings.Join(lines, "\n"))
	}
}

// A container replaces its subPath with a symlink to a host directory
// after its first start (CVE-2017-1002101): the next Setup refuses the
// pod, and the mount point still holds only what the subPath was.
func TestSubPathSymlinkPlantedAfterStart(t *testing.T) {
	needMounts(t)
	m, _ := newManager(t)
	host := canaryDir(t)
	pod := subPathPod(emptyDir("data"), "sub")
	cleanupPod(t, m, pod)

	first, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	target := first["victim"][0].HostPath
	sub := filepath.Join(m.EmptyDirPath(pod.UID, "data"), "sub")
	if err := os.WriteFile(filepath.Join(sub, "mine"), []byte("volume"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a container of the pod can do to its emptyDir.
	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, sub); err != nil {
		t.Fatal(err)
	}

	if _, err := m.Setup(context.Background(), pod); !errors.Is(err, errEscapes) || !errors.Is(err, ErrInvalidMount) {
		t.Errorf("second Setup = %v, want %v and %v", err, errEscapes, ErrInvalidMount)
	}
	if got, err := os.ReadFile(filepath.Join(target, "mine")); err != nil || string(got) != "volume" {
		t.Errorf("through the mount point: %q, %v; want the volume's own file", got, err)
	}
	if _, err := os.Stat(filepath.Join(target, "canary")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the host directory's canary is reachable through the mount point: %v", err)
	}
	checkCanary(t, host)
}

// A subPath replaced by another directory of the volume is mounted anew;
// one left as it was keeps its mount.
func TestSubPathReplacedInsideIsRemounted(t *testing.T) {
	needMounts(t)
	m, _ := newManager(t)
	pod := subPathPod(emptyDir("data"), "sub")
	cleanupPod(t, m, pod)
	first, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	target := first["victim"][0].HostPath
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatalf("second Setup: %v", err)
	}
	if n := len(mountsMentioning(t, target)); n != 1 {
		t.Errorf("%d mounts on %s after an unchanged Setup, want 1", n, target)
	}

	data := m.EmptyDirPath(pod.UID, "data")
	if err := os.Remove(filepath.Join(data, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(data, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "other", "new"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(data, "sub")); err != nil {
		t.Fatal(err)
	}
	again, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatalf("Setup after the replacement: %v", err)
	}
	if got := again["victim"][0].HostPath; got != target {
		t.Errorf("mount point = %s, want %s", got, target)
	}
	if got, err := os.ReadFile(filepath.Join(target, "new")); err != nil || string(got) != "new" {
		t.Errorf("through the mount point: %q, %v; want the new directory's file", got, err)
	}
	if n := len(mountsMentioning(t, target)); n != 1 {
		t.Errorf("%d mounts on %s, want 1 (the stale one replaced, not stacked)", n, target)
	}
}

// A subPath that is, or passes through, a symlink out of its volume is
// refused with an error naming the volume, the subPath and why; nothing
// is mounted, nothing created outside.
func TestSubPathSymlinkOutIsRefused(t *testing.T) {
	needMounts(t)
	host := canaryDir(t)
	vol := filepath.Join(t.TempDir(), "vol")
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"abs": host, "rel": "../../" + filepath.Base(filepath.Dir(host)) + "/host-secrets", "mid": "abs"} {
		if err := os.Symlink(target, filepath.Join(vol, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, subPath := range []string{"abs", "abs/canary", "rel", "mid/new/dir", "abs/new"} {
		t.Run(subPath, func(t *testing.T) {
			m, _ := newManager(t)
			pod := subPathPod(hostPath("hp", vol, corev1.HostPathDirectory), subPath)
			cleanupPod(t, m, pod)
			_, err := m.Setup(context.Background(), pod)
			if !errors.Is(err, ErrInvalidMount) || !errors.Is(err, errEscapes) {
				t.Fatalf("Setup error = %v, want %v and %v", err, errEscapes, ErrInvalidMount)
			}
			for _, want := range []string{`volume "hp"`, `subPath "` + subPath + `"`, "outside the volume", `container "victim"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %s", err, want)
				}
			}
			checkCanary(t, host)
			if _, err := os.Stat(filepath.Join(host, "new")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a directory was created in the host directory: %v", err)
			}
		})
	}
}

// A subPath naming a file is bind-mounted onto a file mount point.
func TestSubPathFile(t *testing.T) {
	needMounts(t)
	m, root := newManager(t)
	vol := filepath.Join(root, "vol")
	if err := os.MkdirAll(filepath.Join(vol, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "etc", "app.conf"), []byte("conf"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("etc/app.conf", filepath.Join(vol, "current")); err != nil {
		t.Fatal(err)
	}
	pod := subPathPod(hostPath("hp", vol, corev1.HostPathDirectory), "current")
	cleanupPod(t, m, pod)
	mounts, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	target := mounts["victim"][0].HostPath
	if got, err := os.ReadFile(target); err != nil || string(got) != "conf" {
		t.Errorf("mount point %s reads %q, %v; want the file's content", target, got, err)
	}
}

// Cleanup unmounts the subPaths before it removes the pod directory, so
// it never removes what a hostPath holds through them.
func TestCleanupUnmountsSubPaths(t *testing.T) {
	needMounts(t)
	m, root := newManager(t)
	vol := filepath.Join(root, "vol")
	if err := os.MkdirAll(filepath.Join(vol, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "data", "precious"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := subPathPod(hostPath("hp", vol, corev1.HostPathDirectory), "data")
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if err := m.Cleanup(pod.UID); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(vol, "data", "precious")); err != nil || string(got) != "keep" {
		t.Errorf("hostPath file after Cleanup: %q, %v; want it kept", got, err)
	}
	if lines := mountsMentioning(t, m.PodDir(pod.UID)); len(lines) > 0 {
		t.Errorf("mounts left after Cleanup:\n%s", strings.Join(lines, "\n"))
	}
	if _, err := os.Stat(m.PodDir(pod.UID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod dir after Cleanup: %v", err)
	}
}

// BenchmarkSetupSubPath is the cost of a sync's Setup for a pod with a
// subPath once its mount exists (a read of /proc/self/mountinfo), beside
// one without.
func BenchmarkSetupSubPath(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("subPath bind mounts need root")
	}
	for _, subPath := range []string{"", "sub"} {
		b.Run("subPath="+subPath, func(b *testing.B) {
			m, err := New(Options{RootDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			pod := subPathPod(emptyDir("data"), subPath)
			defer m.Cleanup(pod.UID)
			for b.Loop() {
				if _, err := m.Setup(context.Background(), pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
