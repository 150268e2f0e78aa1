package cgroups

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The v1 hierarchies the agent writes limits into. The runtime makes the
// containers' cgroups in every hierarchy under the parent it is given.
var v1Hierarchies = []string{"cpu", "memory"}

// dirs are the directories of cgroup n, by hierarchy: one per v1
// hierarchy of v1Hierarchies mounted under Options.FS, or the one of the
// unified hierarchy.
func (m *Manager) dirs(n name) map[string]string {
	p := n.path(m.opts.Driver)
	if m.v2 {
		return map[string]string{"": filepath.Join(m.opts.FS, p)}
	}
	out := map[string]string{}
	for _, h := range v1Hierarchies {
		if fi, err := os.Stat(filepath.Join(m.opts.FS, h)); err == nil && fi.IsDir() {
			out[h] = filepath.Join(m.opts.FS, h, p)
		}
	}
	return out
}

// create makes cgroup n, with its parents, and gives it l (a zero field
// of l is left as the kernel has it). Under v2, the cpu and memory
// controllers are first enabled for the children of every ancestor.
func (m *Manager) create(n name, l limits) error {
	defer m.metrics.since(opCreate, time.Now())
	if m.v2 {
		if err := m.enableControllers(n); err != nil {
			return err
		}
	}
	for h, dir := range m.dirs(n) {
		if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- a cgroup directory's mode is the kernel's
			return fmt.Errorf("cgroup %s: %w", n.path(m.opts.Driver), err)
		}
		if err := m.write(h, dir, l); err != nil {
			return fmt.Errorf("cgroup %s: %w", n.path(m.opts.Driver), err)
		}
	}
	return nil
}

// update gives existing cgroup n the limits l.
func (m *Manager) update(n name, l limits) error {
	defer m.metrics.since(opUpdate, time.Now())
	for h, dir := range m.dirs(n) {
		if err := m.write(h, dir, l); err != nil {
			return fmt.Errorf("cgroup %s: %w", n.path(m.opts.Driver), err)
		}
	}
	return nil
}

func (m *Manager) write(hierarchy, dir string, l limits) error {
	var files [][2]string
	switch {
	case m.v2:
		if l.shares > 0 {
			files = append(files, [2]string{"cpu.weight", strconv.FormatUint(sharesToWeight(l.shares), 10)})
		}
		if l.quota > 0 {
			files = append(files, [2]string{"cpu.max", fmt.Sprintf("%d %d", l.quota, cpuPeriod)})
		}
		if l.memory > 0 {
			files = append(files, [2]string{"memory.max", strconv.FormatInt(l.memory, 10)})
		}
	case hierarchy == "cpu":
		if l.shares > 0 {
			files = append(files, [2]string{"cpu.shares", strconv.FormatUint(l.shares, 10)})
		}
		if l.quota > 0 {
			// The period first: a quota is checked against it.
			files = append(files, [2]string{"cpu.cfs_period_us", strconv.Itoa(cpuPeriod)},
				[2]string{"cpu.cfs_quota_us", strconv.FormatInt(l.quota, 10)})
		}
	case hierarchy == "memory":
		if l.memory > 0 {
			files = append(files, [2]string{"memory.limit_in_bytes", strconv.FormatInt(l.memory, 10)})
		}
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f[0]), f[1]); err != nil {
			return err
		}
	}
	return nil
}

// enableControllers enables cpu and memory for the children of every
// ancestor of n under v2, from the hierarchy's root down.
func (m *Manager) enableControllers(n name) error {
	for i := range len(n) {
		dir := filepath.Join(m.opts.FS, n[:i].path(m.opts.Driver))
		if i > 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- a cgroup directory's mode is the kernel's
				return err
			}
		}
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu +memory"); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes a value into a cgroup file.
func writeFile(file, value string) error {
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil { // #nosec G306 G304 -- a cgroup file: the kernel's mode, the agent's own path
		return fmt.Errorf("writing %q to %s: %w", value, file, err)
	}
	return nil
}

// sharesToWeight maps cgroup v1 CPU shares [2, 262144] onto v2 weights
// [1, 10000] linearly, as runc does.
func sharesToWeight(shares uint64) uint64 {
	if shares == 0 {
		return 0
	}
	return 1 + ((shares-2)*9999)/262142
}
