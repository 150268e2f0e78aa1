package admission

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"k8s.io/component-helpers/node/util/sysctl"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// ReasonSysctlForbidden is the kubelet's reason for a pod refused for
// one of its sysctls.
const ReasonSysctlForbidden = "SysctlForbidden"

// kernelNamespace is the kernel namespace a sysctl belongs to; a pod may
// set only sysctls of a namespace of its own.
type kernelNamespace string

const (
	nsUnknown kernelNamespace = ""
	nsIPC     kernelNamespace = "IPC"
	nsNet     kernelNamespace = "Net"
	nsUTS     kernelNamespace = "UTS"
	nsUser    kernelNamespace = "User"
)

// safeSysctl is one of the kubelet's safe sysctls: namespaced, and unable
// to hurt other pods or the node. since is the first kernel in which the
// sysctl is namespaced ("" for all that Kubernetes supports); on an older
// one it would change the whole node, so it is not safe there.
type safeSysctl struct {
	name, since string
}

// safeSysctls is the kubelet's list (pkg/kubelet/sysctl), as of v1.37.
var safeSysctls = []safeSysctl{
	{name: "kernel.shm_rmid_forced"},
	{name: "net.ipv4.ip_local_port_range"},
	{name: "net.ipv4.tcp_syncookies"},
	{name: "net.ipv4.ping_group_range"},
	{name: "net.ipv4.ip_unprivileged_port_start"},
	{name: "net.ipv4.ip_local_reserved_ports", since: "3.16"},
	{name: "net.ipv4.tcp_keepalive_time", since: "4.5"},
	{name: "net.ipv4.tcp_keepalive_intvl", since: "4.5"},
	{name: "net.ipv4.tcp_keepalive_probes", since: "4.5"},
	{name: "net.ipv4.tcp_fin_timeout", since: "4.6"},
	{name: "net.ipv4.tcp_notsent_lowat", since: "4.6"},
	{name: "net.ipv4.tcp_rmem", since: "4.15"},
	{name: "net.ipv4.tcp_wmem", since: "4.15"},
	{name: "net.ipv4.tcp_slow_start_after_idle", since: "4.15"},
}

// sysctlPattern is what --allowed-unsafe-sysctls takes: a sysctl name,
// with "." or "/" between its segments, whose last segment may end in
// "*" (or be "*") to allow every sysctl beginning with what comes before.
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// maxSysctlLength bounds a sysctl name, as the API does.
const maxSysctlLength = 253

// Sysctls is the kubelet's sysctl admission: a pod may set the safe
// sysctls and the unsafe ones the node's administrator allowed, and only
// in a kernel namespace it does not share with the host (net.* not with
// hostNetwork, the IPC ones not with hostIPC, user.* not without its own
// user namespace). It applies to every pod, static or not: a sysctl
// outside the list could hurt the node or its other pods. Its zero value
// is not usable; build one with NewSysctls. It is read-only once built.
type Sysctls struct {
	names    map[string]kernelNamespace
	prefixes map[string]kernelNamespace
}

// NewSysctls builds the admission of the safe sysctls the kernel (nil if
// unknown: the sysctls namespaced only from some version on are left out)
// namespaces, and of allowedUnsafe, names or "prefix*" patterns. A
// pattern that is not one, or that names sysctls no namespace is known to
// hold, is an error, as under the kubelet.
func NewSysctls(allowedUnsafe []string, kernel *version.Version) (*Sysctls, error) {
	s := &Sysctls{names: map[string]kernelNamespace{}, prefixes: map[string]kernelNamespace{}}
	var patterns []string
	for _, safe := range safeSysctls {
		if safe.since == "" || (kernel != nil && kernel.AtLeast(version.MustParseGeneric(safe.since))) {
			patterns = append(patterns, safe.name)
		}
	}
	for _, p := range append(patterns, allowedUnsafe...) {
		if len(p) > maxSysctlLength || !sysctlPattern.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and be a sysctl name, or one whose last segment ends in *, as kernel.msg* or net.*", p, maxSysctlLength)
		}
		name := sysctl.NormalizeName(p)
		prefix, wildcard := strings.CutSuffix(name, "*")
		ns := sysctlNamespace(prefix)
		if ns == nsUnknown {
			return nil, fmt.Errorf("sysctl %q is not known to be namespaced: a pod setting it would change the whole node", p)
		}
		if wildcard {
			s.prefixes[prefix] = ns
		} else {
			s.names[name] = ns
		}
	}
	return s, nil
}

// Admit refuses a pod that sets a sysctl the list does not allow, or one
// of a namespace it shares with the host, naming the first such sysctl in
// the kubelet's words.
func (s *Sysctls) Admit(pod *corev1.Pod) Result {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return Result{}
	}
	// A pod without hostUsers: false shares the host's user namespace.
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, set := range sc.Sysctls {
		name := sysctl.NormalizeName(set.Name)
		ns, ok := s.lookup(name)
		var why string
		switch {
		case !ok:
			why = fmt.Sprintf("%q not allowlisted", name)
		case ns == nsNet && pod.Spec.HostNetwork, ns == nsIPC && pod.Spec.HostIPC, ns == nsUser && hostUsers:
			why = fmt.Sprintf("%q not allowed with host %s enabled", name, ns)
		default:
			continue
		}
		return Result{ReasonSysctlForbidden, "forbidden sysctl: " + why}
	}
	return Result{}
}

// lookup finds the namespace of an allowed sysctl; a name allowed by
// itself wins over a pattern.
func (s *Sysctls) lookup(name string) (kernelNamespace, bool) {
	if ns, ok := s.names[name]; ok {
		return ns, true
	}
	for prefix, ns := range s.prefixes {
		if strings.HasPrefix(name, prefix) {
			return ns, true
		}
	}
	return nsUnknown, false
}

// sysctlNamespace is the namespace of a sysctl, or of every sysctl that
// begins with a prefix, as the kubelet knows them.
func sysctlNamespace(name string) kernelNamespace {
	switch name {
	case "kernel.domainname":
		return nsUTS
	case "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
		"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg":
		// kernel.shm and kernel.msg stand for the patterns kernel.shm*
		// and kernel.msg*.
		return nsIPC
	}
	for prefix, ns := range map[string]kernelNamespace{"net.": nsNet, "fs.mqueue.": nsIPC, "user.": nsUser} {
		if strings.HasPrefix(name, prefix) {
			return ns
		}
	}
	return nsUnknown
}

// KernelVersion is the running kernel's version, as the kubelet reads it,
// for NewSysctls.
func KernelVersion() (*version.Version, error) {
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return nil, fmt.Errorf("reading the kernel version: %w", err)
	}
	v, err := version.ParseGeneric(strings.TrimSpace(string(release)))
	if err != nil {
		return nil, fmt.Errorf("reading the kernel version %q: %w", strings.TrimSpace(string(release)), err)
	}
	return v, nil
}
