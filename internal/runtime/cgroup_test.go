package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A pod's cgroup is made, with the pod's limits, before its sandbox, and
// the sandbox is put in it.
func TestSyncPodMakesThePodCgroupFirst(t *testing.T) {
	w := newWorld(t)
	for _, h := range []string{"cpu", "memory"} {
		if err := os.MkdirAll(filepath.Join(w.cgroupFS, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pod := newPod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		}
	})
	if _, err := w.sync(pod, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := w.cri.sandboxes[0].Linux.CgroupParent, "/nodeagent/kubepods/burstable/podu1"; got != want {
		t.Errorf("sandbox cgroup parent = %s, want %s", got, want)
	}
	for file, want := range map[string]string{
		"cpu/nodeagent/kubepods/burstable/podu1/cpu.shares":               "102",
		"cpu/nodeagent/kubepods/burstable/podu1/cpu.cfs_quota_us":         "20000",
		"memory/nodeagent/kubepods/burstable/podu1/memory.limit_in_bytes": "33554432",
		"cpu/nodeagent/kubepods/burstable/cpu.shares":                     "102",
	} {
		b, err := os.ReadFile(filepath.Join(w.cgroupFS, file))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %s", file, b, err, want)
		}
	}
}

// A pod whose cgroup cannot be made gets no sandbox.
func TestSyncPodWithoutItsCgroupRunsNothing(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.cgroupFS, "cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cgroupFS, "cpu", "nodeagent"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.sync(newPod(), nil)
	if err == nil {
		t.Fatal("SyncPod succeeded without the pod's cgroup")
	}
	if len(w.cri.sandboxes) != 0 {
		t.Errorf("%d sandboxes created, want none", len(w.cri.sandboxes))
	}
	if len(res.Actions) != 1 || res.Actions[0].Kind != ActionCreateSandbox || res.Actions[0].Err == nil {
		t.Errorf("actions = %+v, want one failed sandbox creation", res.Actions)
	}
}

// A pod whose cgroup is in the flat layout of earlier versions (adopted
// after an upgrade) keeps it: a new sandbox or container joins it.
func TestSyncPodKeepsThePodCgroupOfAnEarlierVersion(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.cgroupFS, "cpu", "nodeagent", "podu1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := w.sync(newPod(), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := w.cri.sandboxes[0].Linux.CgroupParent, "/nodeagent/podu1"; got != want {
		t.Errorf("sandbox cgroup parent = %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(w.cgroupFS, "cpu", "nodeagent", "kubepods", "besteffort", "podu1")); err == nil {
		t.Error("a cgroup was made for the pod in the QoS tree too")
	}
}
