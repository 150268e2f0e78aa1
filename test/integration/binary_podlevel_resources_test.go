package integration

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Pod-level resources (PodLevelResources, on by default upstream): a pod
// that sets its own requests and limits, and containers that set none,
// is Guaranteed by them; its cgroup is limited by them, not by its
// containers' (empty) sums; a container without a limit of its own reads
// the pod's through the downward API; its processes get the Guaranteed
// OOM score.
func TestBinaryPodLevelResources(t *testing.T) {
	root, _ := cgroupRoot(t) // before the agent: removed after its pods
	h := newAgent(t, "--cgroup-root", root)

	main := shContainer("main", sleepForever)
	main.Env = []corev1.EnvVar{{Name: "MEM_LIMIT", ValueFrom: &corev1.EnvVarSource{
		ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}}}
	pod := testPod("podlevel", main, shContainer("helper", sleepForever))
	both := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("96Mi")}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: both, Limits: both}
	h.writeManifest(pod)
	uid := string(h.waitPod("podlevel", "running", 60*time.Second, runningContainer("main")).UID)

	// Guaranteed: right under kubepods, limited by the pod's own amounts.
	kubepods := root + "/kubepods"
	checkFiles(t, map[string]string{
		filepath.Join("/sys/fs/cgroup/cpu", kubepods, "pod"+uid, "cpu.shares"):               "256",
		filepath.Join("/sys/fs/cgroup/cpu", kubepods, "pod"+uid, "cpu.cfs_quota_us"):         "25000",
		filepath.Join("/sys/fs/cgroup/memory", kubepods, "pod"+uid, "memory.limit_in_bytes"): "100663296",
	})
	if got := h.envOf("podlevel", "main")["MEM_LIMIT"]; got != "100663296" {
		t.Errorf("MEM_LIMIT = %q, want the pod-level limit 100663296", got)
	}
	floor := h.oomScoreAdjOfSandbox("podlevel")
	if got := strings.TrimSpace(h.exec("podlevel", "main", "cat", "/proc/1/oom_score_adj")); got != strconv.FormatInt(max(-997, floor), 10) {
		t.Errorf("oom_score_adj = %s, want the Guaranteed class's %d", got, max(-997, floor))
	}
}
