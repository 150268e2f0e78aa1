package eviction

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nodeagent/nodeagent/internal/host"
)

// Reading is one signal's figure: how much of its capacity is available.
type Reading struct {
	Available, Capacity int64
}

// Observation is one reading of every signal the node can measure.
type Observation struct {
	Signals map[string]Reading
}

// Observer reads the signals: memory from the kernel's estimate of what
// can be allocated without swapping (MemAvailable), and what the pods'
// cgroup may still take of the memory allocatable to pods (its working
// set: usage less inactive file pages, as the kubelet figures it); the
// node filesystem from the agent's root directory; the image filesystem
// from where the runtime keeps images; process IDs against the kernel's
// limit.
type Observer struct {
	// Proc is where /proc is mounted ("" for /proc).
	Proc string
	// NodeDir is on the node filesystem.
	NodeDir string
	// ImageDirs are where the runtime keeps images; nil judges the image
	// filesystem as the node filesystem.
	ImageDirs func(context.Context) ([]string, error)
	// PodsMemoryDir is the pods' cgroup in the memory controller, and
	// PodsAllocatable the memory allocatable to pods. Without either
	// there is no allocatableMemory.available signal.
	PodsMemoryDir   string
	PodsAllocatable int64
}

// Observe reads every signal now.
func (o Observer) Observe(ctx context.Context) (Observation, error) {
	ob := Observation{Signals: map[string]Reading{}}
	proc := o.Proc
	if proc == "" {
		proc = "/proc"
	}
	mem, err := host.ReadMeminfo(filepath.Join(proc, "meminfo"))
	if err != nil {
		return ob, err
	}
	ob.Signals[SignalMemoryAvailable] = Reading{Available: mem["MemAvailable"], Capacity: mem["MemTotal"]}
	if o.PodsMemoryDir != "" && o.PodsAllocatable > 0 {
		ws, err := WorkingSet(o.PodsMemoryDir)
		if err != nil {
			return ob, fmt.Errorf("the pods' memory: %w", err)
		}
		ob.Signals[SignalAllocatableMemoryAvailable] = Reading{Available: o.PodsAllocatable - ws, Capacity: o.PodsAllocatable}
	}
	nodefs, err := host.StatFS(o.NodeDir)
	if err != nil {
		return ob, fmt.Errorf("the node filesystem: %w", err)
	}
	ob.Signals[SignalNodeFSAvailable] = Reading{Available: nodefs.Available, Capacity: nodefs.Capacity}
	ob.Signals[SignalNodeFSInodesFree] = Reading{Available: nodefs.InodesFree, Capacity: nodefs.Inodes}
	// The runtime may keep images on the node filesystem; with several
	// image filesystems the fullest one is the one under pressure.
	imagefs := nodefs
	var dirs []string
	if o.ImageDirs != nil {
		// The runtime's trouble shows elsewhere (Ready); the image
		// filesystem is then judged as the node filesystem.
		dirs, _ = o.ImageDirs(ctx)
	}
	for i, dir := range dirs {
		st, err := host.StatFS(dir)
		if err != nil {
			return ob, fmt.Errorf("the image filesystem: %w", err)
		}
		if i == 0 || st.Available < imagefs.Available {
			imagefs = st
		}
	}
	ob.Signals[SignalImageFSAvailable] = Reading{Available: imagefs.Available, Capacity: imagefs.Capacity}
	ob.Signals[SignalImageFSInodesFree] = Reading{Available: imagefs.InodesFree, Capacity: imagefs.Inodes}
	limit, free, err := host.PIDs(proc)
	if err != nil {
		return ob, err
	}
	ob.Signals[SignalPIDAvailable] = Reading{Available: free, Capacity: limit}
	return ob, nil
}

// WorkingSet is the memory a cgroup uses that the kernel cannot simply
// drop: its usage less its inactive file pages. dir is the cgroup's
// directory in the memory controller (cgroup v1) or the unified hierarchy.
func WorkingSet(dir string) (int64, error) {
	usageFile, inactiveKey := "memory.usage_in_bytes", "total_inactive_file"
	if _, err := os.Stat(filepath.Join(dir, usageFile)); err != nil {
		usageFile, inactiveKey = "memory.current", "inactive_file"
	}
	usage, err := strconv.ParseInt(host.FirstLine(filepath.Join(dir, usageFile)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", filepath.Join(dir, usageFile), err)
	}
	inactive, err := memoryStat(dir, inactiveKey)
	if err != nil {
		return 0, err
	}
	return max(0, usage-inactive), nil
}

// memoryStat is one field of the cgroup's memory.stat.
func memoryStat(dir, key string) (int64, error) {
	path := filepath.Join(dir, "memory.stat")
	b, err := host.ReadSmall(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s %q: %w", path, key, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}
