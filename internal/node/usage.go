package node

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nodeagent/nodeagent/internal/host"
)

// Usage is what the whole node uses, for the node API's
// /metrics/resource: its CPU time and its memory working set, figured as
// the pressure conditions figure memory (MemTotal less MemAvailable).
type Usage struct {
	CPU              time.Duration
	MemoryWorkingSet int64
	Time             time.Time
}

// userHZ is the unit of /proc/stat's times: Linux reports them in 1/100 s
// on every architecture it runs Kubernetes on.
const userHZ = 100

// ReadUsage reads the node's usage now.
func ReadUsage() (Usage, error) { return readUsage(realHost, time.Now()) }

func readUsage(h hostFiles, now time.Time) (Usage, error) {
	u := Usage{Time: now}
	mem, err := host.ReadMeminfo(filepath.Join(h.proc, "meminfo"))
	if err != nil {
		return u, err
	}
	u.MemoryWorkingSet = mem["MemTotal"] - mem["MemAvailable"]
	path := filepath.Join(h.proc, "stat")
	b, err := host.ReadSmall(path)
	if err != nil {
		return u, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...: busy is all
	// but idle and iowait.
	if len(fields) < 9 || fields[0] != "cpu" {
		return u, fmt.Errorf("%s: no cpu line", path)
	}
	var ticks int64
	for i, f := range fields[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return u, fmt.Errorf("%s: cpu field %d %q: %w", path, i+1, f, err)
		}
		ticks += n
	}
	u.CPU = time.Duration(ticks) * time.Second / userHZ
	return u, nil
}
