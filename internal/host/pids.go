package host

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// PIDs reads, under a /proc directory, the kernel's PID limit and how many
// PIDs are free: pid_max less the tasks that exist (the total of
// loadavg's running/total).
func PIDs(proc string) (limit, available int64, err error) {
	maxPath := filepath.Join(proc, "sys/kernel/pid_max")
	limit, err = strconv.ParseInt(FirstLine(maxPath), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", maxPath, err)
	}
	loadPath := filepath.Join(proc, "loadavg")
	fields := strings.Fields(FirstLine(loadPath))
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
