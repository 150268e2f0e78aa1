package host

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Interface is one network interface's cumulative counters.
type Interface struct {
	Name                                 string
	RxBytes, RxErrors, TxBytes, TxErrors uint64
}

// ignoredInterfaces are left out of the node's interfaces, as cAdvisor
// leaves them out of the kubelet's: loopback, and the host ends of
// containers' veth pairs and bridges of container engines.
var ignoredInterfaces = []string{"lo", "veth", "docker", "nerdctl"}

// Interfaces are the counters of the host network namespace's
// interfaces, from /proc/net/dev.
func Interfaces() ([]Interface, error) { return readNetDev("/proc/net/dev") }

// NamespaceInterfaces are the counters of the interfaces of process
// pid's network namespace (a pod's, through one of its containers).
func NamespaceInterfaces(pid int) ([]Interface, error) {
	return readNetDev("/proc/" + strconv.Itoa(pid) + "/net/dev")
}

func readNetDev(path string) ([]Interface, error) {
	b, err := ReadSmall(path)
	if err != nil {
		return nil, fmt.Errorf("reading the network interfaces' counters: %w", err)
	}
	var out []Interface
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		fields := strings.Fields(rest)
		if !ok || len(fields) < 11 || ignored(name) {
			continue // the two header lines, or an interface left out
		}
		var v [11]uint64
		for _, i := range []int{0, 2, 8, 10} { // rx bytes, rx errs, tx bytes, tx errs
			if v[i], err = strconv.ParseUint(fields[i], 10, 64); err != nil {
				return nil, fmt.Errorf("%s: interface %s: %w", path, name, err)
			}
		}
		out = append(out, Interface{Name: name, RxBytes: v[0], RxErrors: v[2], TxBytes: v[8], TxErrors: v[10]})
	}
	return out, nil
}

func ignored(name string) bool {
	for _, p := range ignoredInterfaces {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
