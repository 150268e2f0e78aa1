package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestBinaryLifecycleHooks measures the hooks from inside the container,
// on the host's monotonic clock (/proc/uptime, which containers share):
// the container is not shown running before its 2 s postStart hook ended;
// removed with grace 8, its 3 s preStop hook starts at once, SIGTERM comes
// when it ends, and SIGKILL (the container ignores SIGTERM) before 8 s.
func TestBinaryLifecycleHooks(t *testing.T) {
	h := newAgent(t)
	out := t.TempDir()
	stamp := func(file string) string { return "read u _ < /proc/uptime; echo $u > /out/" + file }
	c := shContainer("app", "")
	c.Command[2] = "trap '" + stamp("term") + "' TERM; " + sleepForever
	c.Lifecycle = &corev1.Lifecycle{
		PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 2; " + stamp("poststart")}}},
		PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", stamp("prestop") + "; sleep 3"}}},
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "out", MountPath: "/out"}}
	pod := testPod("hooks", c)
	grace := int64(8)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Spec.Volumes = []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: out}}}}
	h.writeManifest(pod)

	h.waitPod("hooks", "running", 60*time.Second, runningContainer("app"))
	if _, err := os.Stat(filepath.Join(out, "poststart")); err != nil {
		t.Fatalf("shown running before its postStart hook ended: %v", err)
	}

	removed := uptime(t, "/proc/uptime")
	h.removeManifest("hooks")
	deadline := time.Now().Add(20 * time.Second)
	for len(h.containers("hooks", true)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the container still runs 20 s after its removal\n%s", h.log(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	killed := uptime(t, "/proc/uptime")
	preStop := uptime(t, filepath.Join(out, "prestop")) - removed
	term := uptime(t, filepath.Join(out, "term")) - removed
	kill := killed - removed
	t.Logf("after the removal: preStop at %.2fs, SIGTERM at %.2fs, gone at %.2fs (grace 8 s)", preStop, term, kill)
	if preStop < 0 || preStop > 1.5 {
		t.Errorf("preStop started %.2fs after the removal, want at once", preStop)
	}
	if term < 2.9 || term > 4.5 {
		t.Errorf("SIGTERM came %.2fs after the removal, want when the 3 s preStop hook ended", term)
	}
	if kill < 6 || kill > 8.6 {
		t.Errorf("the container was gone %.2fs after the removal, want SIGKILL at the end of the 8 s grace period", kill)
	}
}

func uptime(t *testing.T, path string) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		t.Fatalf("%s is empty", path)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
