package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// maxPids bounds the --pids file.
const maxPids = 10000

// proc is one measured process.
type proc struct {
	Role string // control, node or runtime
	Name string
	PID  int
}

// readPids reads 'ROLE NAME PID' lines; an empty path is no process.
func readPids(path string) ([]proc, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path) // #nosec G304 -- the operator names the file
	if err != nil {
		return nil, fmt.Errorf("--pids: %w", err)
	}
	defer f.Close()
	var out []proc
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(out) == maxPids {
			return nil, fmt.Errorf("--pids %s: more than %d processes", path, maxPids)
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("--pids %s:%d: want ROLE NAME PID, got %q", path, n, sc.Text())
		}
		switch fields[0] {
		case "control", "node", "runtime":
		default:
			return nil, fmt.Errorf("--pids %s:%d: role %q is not control, node or runtime", path, n, fields[0])
		}
		pid, err := strconv.Atoi(fields[2])
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("--pids %s:%d: pid %q is not a positive number", path, n, fields[2])
		}
		out = append(out, proc{Role: fields[0], Name: fields[1], PID: pid})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--pids %s: %w", path, err)
	}
	return out, nil
}

// meter takes snapshots of what the report compares.
type meter struct {
	cs      kubernetes.Interface
	etcdURL string
	procs   []proc
}

// snapshot is the state of the counters at one moment.
type snapshot struct {
	At    time.Time
	API   families
	Etcd  families
	Procs []procSample // as meter.procs
}

func (m *meter) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{At: time.Now()}
	var err error
	if s.API, err = scrapeAPIServer(ctx, m.cs); err != nil {
		return s, err
	}
	if s.Etcd, err = scrapeURL(ctx, m.etcdURL); err != nil {
		return s, err
	}
	s.Procs = make([]procSample, len(m.procs))
	for i, p := range m.procs {
		s.Procs[i] = sampleProc(p.PID)
		if s.Procs[i].Err != nil {
			return s, fmt.Errorf("%s %s (pid %d) is gone: %w", p.Role, p.Name, p.PID, s.Procs[i].Err)
		}
	}
	return s, nil
}

// phase is the interval between two snapshots.
type phase struct {
	Name     string
	From, To snapshot
	Requests requestCounts
}

func (p *phase) seconds() float64 { return p.To.At.Sub(p.From.At).Seconds() }
