package cgroups

import (
	"path/filepath"
	"testing"
)

// A resize grows the pod's cgroup before its containers are resized and
// shrinks it after: a container's CFS quota never exceeds its pod's.
func TestResizePodOrder(t *testing.T) {
	fs := fakeV1(t)
	m := newManager(Options{Root: "/nodeagent", FS: fs})
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	small := testPod("g1", ctr("a", "200m", "64Mi", "200m", "64Mi"), ctr("b", "100m", "32Mi", "100m", "32Mi"))
	if err := m.EnsurePod(small); err != nil {
		t.Fatal(err)
	}
	cpu, mem := filepath.Join(fs, "cpu", "nodeagent", "kubepods", "podg1"), filepath.Join(fs, "memory", "nodeagent", "kubepods", "podg1")
	during := func(want map[string]string) func() error {
		return func() error {
			got := files(t, cpu, "cpu.cfs_quota_us", "cpu.shares")
			for k, v := range files(t, mem, "memory.limit_in_bytes") {
				got[k] = v
			}
			if !equal(got, want) {
				t.Errorf("while the containers are resized: %v, want %v", got, want)
			}
			return nil
		}
	}
	// a grows in cpu, b shrinks in memory: cpu grows first, memory after.
	resized := testPod("g1", ctr("a", "400m", "64Mi", "400m", "64Mi"), ctr("b", "100m", "16Mi", "100m", "16Mi"))
	if err := m.ResizePod(small, resized, during(map[string]string{
		"cpu.cfs_quota_us": "50000", "cpu.shares": "512", "memory.limit_in_bytes": "100663296",
	})); err != nil {
		t.Fatal(err)
	}
	after := files(t, cpu, "cpu.cfs_quota_us", "cpu.shares")
	after["memory.limit_in_bytes"] = files(t, mem, "memory.limit_in_bytes")["memory.limit_in_bytes"]
	if want := map[string]string{"cpu.cfs_quota_us": "50000", "cpu.shares": "512", "memory.limit_in_bytes": "83886080"}; !equal(after, want) {
		t.Errorf("after the resize: %v, want %v", after, want)
	}
	// Back: cpu shrinks after, memory grows first.
	if err := m.ResizePod(resized, small, during(map[string]string{
		"cpu.cfs_quota_us": "50000", "cpu.shares": "512", "memory.limit_in_bytes": "100663296",
	})); err != nil {
		t.Fatal(err)
	}
	if got := files(t, cpu, "cpu.cfs_quota_us")["cpu.cfs_quota_us"]; got != "30000" {
		t.Errorf("cpu.cfs_quota_us after shrinking = %s, want 30000", got)
	}
}
