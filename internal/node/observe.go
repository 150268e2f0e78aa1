package node

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// observation is one reading of the figures the pressure conditions are
// computed from.
type observation struct {
	memoryAvailable, memoryCapacity int64
	nodefs, imagefs                 fsStats
	pidsAvailable, pidsMax          int64
}

// observer reads them: memory from the kernel's estimate of what can be
// allocated without swapping (MemAvailable), the node filesystem from the
// agent's root directory, the image filesystem from where the runtime
// says it keeps images, processes against the kernel's PID limit.
type observer struct {
	host    hostFiles
	nodeDir string
}

func (o observer) observe(imageDirs []string) (observation, error) {
	var ob observation
	mem, err := readMeminfo(filepath.Join(o.host.proc, "meminfo"))
	if err != nil {
		return ob, err
	}
	ob.memoryCapacity, ob.memoryAvailable = mem["MemTotal"], mem["MemAvailable"]
	if ob.nodefs, err = statFS(o.nodeDir); err != nil {
		return ob, fmt.Errorf("the node filesystem: %w", err)
	}
	// The runtime may keep images on the node filesystem; with several
	// image filesystems the fullest one is the one under pressure.
	ob.imagefs = ob.nodefs
	for i, dir := range imageDirs {
		st, err := statFS(dir)
		if err != nil {
			return ob, fmt.Errorf("the image filesystem: %w", err)
		}
		if i == 0 || st.available < ob.imagefs.available {
			ob.imagefs = st
		}
	}
	if ob.pidsMax, ob.pidsAvailable, err = o.pids(); err != nil {
		return ob, err
	}
	return ob, nil
}

// pids reads the PID limit and how many of them are free: pid_max less
// the tasks that exist (the total of /proc/loadavg's running/total).
func (o observer) pids() (limit, available int64, err error) {
	maxPath := filepath.Join(o.host.proc, "sys/kernel/pid_max")
	limit, err = strconv.ParseInt(firstLine(maxPath), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", maxPath, err)
	}
	loadPath := filepath.Join(o.host.proc, "loadavg")
	fields := strings.Fields(firstLine(loadPath))
	if len(fields) < 4 {
		return 0, 0, fmt.Errorf("reading %s: want 5 fields", loadPath)
	}
	_, total, ok := strings.Cut(fields[3], "/")
	tasks, err := strconv.ParseInt(total, 10, 64)
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("reading %s: bad task count %q", loadPath, fields[3])
	}
	return limit, limit - tasks, nil
}
