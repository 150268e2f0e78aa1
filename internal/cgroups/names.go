package cgroups

import (
	"errors"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Driver is how cgroups are named and who is said to own them.
type Driver string

// The drivers the kubelet knows.
const (
	DriverCgroupfs Driver = "cgroupfs"
	DriverSystemd  Driver = "systemd"
)

// ErrUnknownDriver is Validate's error for a driver the kubelet does not
// know.
var ErrUnknownDriver = errors.New("the cgroup driver must be cgroupfs or systemd")

// Validate refuses a driver other than cgroupfs and systemd; empty is
// cgroupfs.
func (d Driver) Validate() error {
	switch d {
	case "", DriverCgroupfs, DriverSystemd:
		return nil
	}
	return fmt.Errorf("%w, not %q", ErrUnknownDriver, string(d))
}

// name is a cgroup as the list of its components below the hierarchy's
// root, whatever the driver calls it.
type name []string

// Components of the QoS tree, as the kubelet names them.
const (
	kubepods      = "kubepods"
	burstable     = "burstable"
	besteffort    = "besteffort"
	podPrefix     = "pod"
	systemdSuffix = ".slice"
)

// rootName splits a cgroupfs path such as /nodeagent into components.
func rootName(root string) name {
	var n name
	for _, c := range strings.Split(strings.Trim(path.Clean("/"+root), "/"), "/") {
		if c != "" {
			n = append(n, c)
		}
	}
	return n
}

func (n name) child(c ...string) name {
	return append(append(name{}, n...), c...)
}

// path is the name in the driver's form, which is also the directory
// below each hierarchy's mount point.
func (n name) path(d Driver) string {
	if d != DriverSystemd {
		return "/" + path.Join(n...)
	}
	// Each component is a slice inside the slice of its parent, named by
	// the whole chain: a-b.slice lives in a.slice. A "-" would split the
	// name, so the kubelet writes it as "_".
	if len(n) == 0 {
		return "/"
	}
	var b strings.Builder
	prefix := ""
	for _, c := range n {
		prefix += strings.ReplaceAll(c, "-", "_")
		b.WriteString("/" + prefix + systemdSuffix)
		prefix += "-"
	}
	return b.String()
}

// qosName is the cgroup of a QoS class: Guaranteed pods live directly in
// kubepods.
func (m *Manager) qosName(class corev1.PodQOSClass) name {
	switch class {
	case corev1.PodQOSBurstable:
		return m.kubepods.child(burstable)
	case corev1.PodQOSBestEffort:
		return m.kubepods.child(besteffort)
	}
	return m.kubepods
}

func (m *Manager) podName(class corev1.PodQOSClass, uid types.UID) name {
	return m.qosName(class).child(podPrefix + string(uid))
}

// isPodCgroup tells whether the last element of a cgroup path names a pod's
// cgroup in either driver's form: pod<uid>, or ...-pod<uid>.slice.
func isPodCgroup(base string) bool {
	if strings.HasPrefix(base, podPrefix) && !strings.HasSuffix(base, systemdSuffix) {
		return len(base) > len(podPrefix)
	}
	if !strings.HasSuffix(base, systemdSuffix) {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(base, systemdSuffix), "-")
	last := parts[len(parts)-1]
	return len(parts) > 1 && strings.HasPrefix(last, podPrefix) && len(last) > len(podPrefix)
}
