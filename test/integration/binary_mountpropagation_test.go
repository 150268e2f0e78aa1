package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A hostPath mounted with mountPropagation HostToContainer sees a mount
// the host makes beneath it after the container started; one mounted
// without propagation does not.
func TestBinaryMountPropagation(t *testing.T) {
	h := newAgent(t)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	// Propagation needs a shared mount at the source.
	run("mount", "--bind", shared, shared)
	run("mount", "--make-shared", shared)
	t.Cleanup(func() { _ = exec.Command("umount", "-R", "-l", shared).Run() })

	hostToContainer := corev1.MountPropagationHostToContainer
	c := shContainer("main", sleepForever)
	c.VolumeMounts = []corev1.VolumeMount{
		{Name: "h", MountPath: "/follows", MountPropagation: &hostToContainer},
		{Name: "h", MountPath: "/private"},
	}
	pod := testPod("propagation", c)
	pod.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: shared}}}}
	h.writeManifest(pod)
	h.waitPod("propagation", "running", 60*time.Second, runningContainer("main"))

	inner := filepath.Join(shared, "later")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", inner)
	if err := os.WriteFile(filepath.Join(inner, "mark"), []byte("seen"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := h.exec("propagation", "main", "sh", "-c", "cat /follows/later/mark; echo; cat /private/later/mark 2>/dev/null || echo absent")
	if got != "seen\nabsent\n" {
		t.Errorf("the container saw %q, want the mark through /follows only", got)
	}
}
