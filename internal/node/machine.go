package node

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Machine is what the node is made of, read once at start.
type Machine struct {
	CPUs        int
	MemoryBytes int64
	// HugePages maps a page size in bytes to the bytes of pages of that
	// size reserved on the node (zero for a supported size with none).
	HugePages map[int64]int64

	MachineID, SystemUUID, BootID string
	KernelVersion, OSImage        string
	OperatingSystem, Architecture string
	Hostname                      string
}

// hostFiles are where the machine's facts are read; tests point them at a
// directory of their own.
type hostFiles struct {
	proc, sys, etc string
}

var realHost = hostFiles{proc: "/proc", sys: "/sys", etc: "/etc"}

// maxHostFile bounds a file read from /proc, /sys or /etc.
const maxHostFile = 1 << 20

// ReadMachine reads the machine's facts. Only what a node cannot be
// described without (CPUs, memory) is an error when missing; an
// identifier the machine does not expose (no DMI product UUID in a VM,
// say) is left empty, as the kubelet does.
func ReadMachine() (Machine, error) { return readMachine(realHost) }

func readMachine(h hostFiles) (Machine, error) {
	m := Machine{
		CPUs:            goruntime.NumCPU(),
		OperatingSystem: goruntime.GOOS,
		Architecture:    goruntime.GOARCH,
		HugePages:       map[int64]int64{},
	}
	mem, err := readMeminfo(filepath.Join(h.proc, "meminfo"))
	if err != nil {
		return Machine{}, err
	}
	total, ok := mem["MemTotal"]
	if !ok {
		return Machine{}, fmt.Errorf("%s: no MemTotal", filepath.Join(h.proc, "meminfo"))
	}
	m.MemoryBytes = total
	m.HugePages, err = readHugePages(filepath.Join(h.sys, "kernel/mm/hugepages"))
	if err != nil {
		return Machine{}, err
	}
	m.MachineID = firstLine(filepath.Join(h.etc, "machine-id"))
	m.SystemUUID = firstLine(filepath.Join(h.sys, "class/dmi/id/product_uuid"))
	m.BootID = firstLine(filepath.Join(h.proc, "sys/kernel/random/boot_id"))
	m.KernelVersion = firstLine(filepath.Join(h.proc, "sys/kernel/osrelease"))
	m.OSImage = osImage(filepath.Join(h.etc, "os-release"))
	m.Hostname, _ = os.Hostname()
	return m, nil
}

// readSmall reads a host file of bounded size. The buffer grows with
// what is read: the files read every status period are a few KiB.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- a fixed host file under /proc, /sys or /etc
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHostFile))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

func firstLine(path string) string {
	b, err := readSmall(path)
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// readMeminfo returns /proc/meminfo's fields in bytes.
func readMeminfo(path string) (map[string]int64, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, fmt.Errorf("reading the memory size: %w", err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[key] = v
	}
	return out, nil
}

// readHugePages reads the reserved huge pages of every supported size
// from dir's hugepages-<size>kB/nr_hugepages. A kernel without huge pages
// has no dir: none.
func readHugePages(dir string) (map[int64]int64, error) {
	out := map[int64]int64{}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return out, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading the huge page sizes: %w", err)
	}
	for _, e := range entries {
		kb, ok := strings.CutPrefix(e.Name(), "hugepages-")
		kb, ok2 := strings.CutSuffix(kb, "kB")
		size, err := strconv.ParseInt(kb, 10, 64)
		if !ok || !ok2 || err != nil {
			continue
		}
		n, err := strconv.ParseInt(firstLine(filepath.Join(dir, e.Name(), "nr_hugepages")), 10, 64)
		if err != nil {
			n = 0
		}
		out[size*1024] = n * size * 1024
	}
	return out, nil
}

// osImage is PRETTY_NAME from os-release, or "Unknown" as the kubelet says.
func osImage(path string) string {
	b, err := readSmall(path)
	if err != nil {
		return "Unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return "Unknown"
}

// hugePageResource names the resource of a huge page size, as
// hugepages-2Mi.
func hugePageResource(size int64) corev1.ResourceName {
	return corev1.ResourceName(corev1.ResourceHugePagesPrefix + resource.NewQuantity(size, resource.BinarySI).String())
}

// fsStats are a filesystem's free and total bytes and inodes.
type fsStats struct {
	capacity, available int64
	inodes, inodesFree  int64
}

func statFS(path string) (fsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fsStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := int64(st.Bsize) // #nosec G115 -- a block size is small and positive
	return fsStats{
		capacity:   int64(st.Blocks) * bs, // #nosec G115 -- block counts fit int64
		available:  int64(st.Bavail) * bs, // #nosec G115 -- as above
		inodes:     int64(st.Files),       // #nosec G115 -- as above
		inodesFree: int64(st.Ffree),       // #nosec G115 -- as above
	}, nil
}
