package eviction

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The working set is the usage less the inactive file pages, under either
// cgroup version's file names.
func TestWorkingSet(t *testing.T) {
	v1 := t.TempDir()
	writeFile(t, filepath.Join(v1, "memory.usage_in_bytes"), "1000\n")
	writeFile(t, filepath.Join(v1, "memory.stat"), "cache 500\ninactive_file 7\ntotal_inactive_file 300\n")
	if ws, err := WorkingSet(v1); err != nil || ws != 700 {
		t.Errorf("v1 working set = %d, %v; want 700", ws, err)
	}
	v2 := t.TempDir()
	writeFile(t, filepath.Join(v2, "memory.current"), "1000\n")
	writeFile(t, filepath.Join(v2, "memory.stat"), "anon 600\ninactive_file 1200\n")
	if ws, err := WorkingSet(v2); err != nil || ws != 0 {
		t.Errorf("v2 working set = %d, %v; want 0 (never negative)", ws, err)
	}
	if _, err := WorkingSet(t.TempDir()); err == nil {
		t.Error("a directory without memory files read")
	}
}

func TestObserve(t *testing.T) {
	proc := t.TempDir()
	writeFile(t, filepath.Join(proc, "meminfo"), "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n")
	writeFile(t, filepath.Join(proc, "sys/kernel/pid_max"), "1000\n")
	writeFile(t, filepath.Join(proc, "loadavg"), "0 0 0 1/100 7\n")
	pods := t.TempDir()
	writeFile(t, filepath.Join(pods, "memory.usage_in_bytes"), "600\n")
	writeFile(t, filepath.Join(pods, "memory.stat"), "total_inactive_file 100\n")
	ob, err := Observer{Proc: proc, NodeDir: t.TempDir(), PodsMemoryDir: pods, PodsAllocatable: 1000}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for signal, want := range map[string]Reading{
		SignalMemoryAvailable:            {Available: 1024 << 10, Capacity: 2048 << 10},
		SignalAllocatableMemoryAvailable: {Available: 500, Capacity: 1000},
		SignalPIDAvailable:               {Available: 900, Capacity: 1000},
	} {
		if got := ob.Signals[signal]; got != want {
			t.Errorf("%s = %+v, want %+v", signal, got, want)
		}
	}
	nodefs, imagefs := ob.Signals[SignalNodeFSAvailable], ob.Signals[SignalImageFSAvailable]
	if nodefs.Capacity <= 0 || imagefs != nodefs {
		t.Errorf("nodefs %+v, imagefs %+v: without image directories the image filesystem is the node's", nodefs, imagefs)
	}
}
