package node

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	"github.com/nodeagent/nodeagent/internal/host"
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
	mem, err := host.ReadMeminfo(filepath.Join(h.proc, "meminfo"))
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
	m.MachineID = host.FirstLine(filepath.Join(h.etc, "machine-id"))
	m.SystemUUID = host.FirstLine(filepath.Join(h.sys, "class/dmi/id/product_uuid"))
	m.BootID = host.FirstLine(filepath.Join(h.proc, "sys/kernel/random/boot_id"))
	m.KernelVersion = host.FirstLine(filepath.Join(h.proc, "sys/kernel/osrelease"))
	m.OSImage = osImage(filepath.Join(h.etc, "os-release"))
	m.Hostname, _ = os.Hostname()
	return m, nil
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
		n, err := strconv.ParseInt(host.FirstLine(filepath.Join(dir, e.Name(), "nr_hugepages")), 10, 64)
		if err != nil {
			n = 0
		}
		out[size*1024] = n * size * 1024
	}
	return out, nil
}

// osImage is PRETTY_NAME from os-release, or "Unknown" as the kubelet says.
func osImage(path string) string {
	b, err := host.ReadSmall(path)
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
