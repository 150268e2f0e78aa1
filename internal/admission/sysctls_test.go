package admission

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
)

func sysctlPod(names ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
	}
}

func TestSysctlsAdmit(t *testing.T) {
	hostNetwork := func(p *corev1.Pod) { p.Spec.HostNetwork = true }
	hostIPC := func(p *corev1.Pod) { p.Spec.HostIPC = true }
	ownUsers := func(p *corev1.Pod) { p.Spec.HostUsers = ptr.To(false) }
	for _, tc := range []struct {
		name    string
		unsafe  []string
		kernel  string
		pod     []func(*corev1.Pod)
		message string // "" admits
	}{
		{name: "no security context", pod: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.SecurityContext = nil }}},
		{name: "no sysctl", pod: []func(*corev1.Pod){sysctlPod()}},
		{name: "safe ones", pod: []func(*corev1.Pod){sysctlPod("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ping_group_range")}},
		{name: "unsafe, not allowed (the conformance test's)", pod: []func(*corev1.Pod){sysctlPod("kernel.shm_rmid_forced", "kernel.msgmax")},
			message: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "the first refused one is named", pod: []func(*corev1.Pod){sysctlPod("kernel.sem", "kernel.msgmax")},
			message: `forbidden sysctl: "kernel.sem" not allowlisted`},
		{name: "unsafe, allowed by name", unsafe: []string{"kernel.msgmax"}, pod: []func(*corev1.Pod){sysctlPod("kernel.msgmax")}},
		{name: "unsafe, allowed by pattern", unsafe: []string{"kernel.msg*", "net.*"}, pod: []func(*corev1.Pod){sysctlPod("kernel.msgmnb", "net.core.somaxconn")}},
		{name: "a pattern allows only what it begins", unsafe: []string{"kernel.msg*"}, pod: []func(*corev1.Pod){sysctlPod("kernel.shmmax")},
			message: `forbidden sysctl: "kernel.shmmax" not allowlisted`},
		{name: "slashes are read as sysctl.d does", pod: []func(*corev1.Pod){sysctlPod("net/ipv4/ip_local_port_range")}},
		{name: "a slash inside a segment", unsafe: []string{"net.ipv4.conf.*"}, pod: []func(*corev1.Pod){sysctlPod("net/ipv4/conf/eth0.100/rp_filter")}},
		{name: "kernel-dependent safe one on a new kernel", kernel: "6.1.0-18-amd64", pod: []func(*corev1.Pod){sysctlPod("net.ipv4.tcp_rmem")}},
		{name: "kernel-dependent safe one on an old kernel", kernel: "4.14.0", pod: []func(*corev1.Pod){sysctlPod("net.ipv4.tcp_rmem")},
			message: `forbidden sysctl: "net.ipv4.tcp_rmem" not allowlisted`},
		{name: "kernel-dependent safe one, kernel unknown", pod: []func(*corev1.Pod){sysctlPod("net.ipv4.tcp_keepalive_time")},
			message: `forbidden sysctl: "net.ipv4.tcp_keepalive_time" not allowlisted`},
		{name: "safe net one with hostNetwork", pod: []func(*corev1.Pod){sysctlPod("net.ipv4.ip_local_port_range"), hostNetwork},
			message: `forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled`},
		{name: "safe IPC one with hostIPC", pod: []func(*corev1.Pod){sysctlPod("kernel.shm_rmid_forced"), hostIPC},
			message: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
		{name: "allowed IPC pattern with hostIPC", unsafe: []string{"kernel.msg*"}, pod: []func(*corev1.Pod){sysctlPod("kernel.msgmax"), hostIPC},
			message: `forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled`},
		{name: "net one with hostIPC", pod: []func(*corev1.Pod){sysctlPod("net.ipv4.tcp_syncookies"), hostIPC}},
		{name: "IPC one with hostNetwork", pod: []func(*corev1.Pod){sysctlPod("kernel.shm_rmid_forced"), hostNetwork}},
		{name: "user one in the host's user namespace", unsafe: []string{"user.max_user_namespaces"}, pod: []func(*corev1.Pod){sysctlPod("user.max_user_namespaces")},
			message: `forbidden sysctl: "user.max_user_namespaces" not allowed with host User enabled`},
		{name: "user one in the pod's own user namespace", unsafe: []string{"user.*"}, pod: []func(*corev1.Pod){sysctlPod("user.max_user_namespaces"), ownUsers}},
		{name: "UTS one", unsafe: []string{"kernel.domainname"}, pod: []func(*corev1.Pod){sysctlPod("kernel.domainname"), hostNetwork, hostIPC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kernel *version.Version
			if tc.kernel != "" {
				kernel = version.MustParseGeneric(tc.kernel)
			}
			s, err := NewSysctls(tc.unsafe, kernel)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Admit(apiPod("p", nil, tc.pod...))
			want := Result{}
			if tc.message != "" {
				want = Result{ReasonSysctlForbidden, tc.message}
			}
			if got != want {
				t.Errorf("Admit = %+v, want %+v", got, want)
			}
		})
	}
}

func TestNewSysctlsRefusesBadPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{"kernel.msgmax", ""},
		{"kernel.msg*", ""},
		{"net.*", ""},
		{"fs.mqueue.*", ""},
		{"net/ipv4/ip_forward", ""},
		{"kernel.domainname", ""},
		{"*", "not known to be namespaced"},
		{"net*", "not known to be namespaced"},
		{"kernel.*", "not known to be namespaced"},
		{"kernel.panic", "not known to be namespaced"},
		{"vm.swappiness", "not known to be namespaced"},
		{"net.*.foo", "must have at most 253 characters"},
		{"net.ipv4.*x", "must have at most 253 characters"},
		{"Net.ipv4", "must have at most 253 characters"},
		{"net..ipv4", "must have at most 253 characters"},
		{"", "must have at most 253 characters"},
		{"net." + strings.Repeat("a", 250), "must have at most 253 characters"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			_, err := NewSysctls([]string{tc.pattern}, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("NewSysctls(%q) = %v, want it taken", tc.pattern, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("NewSysctls(%q) = %v, want an error saying %q", tc.pattern, err, tc.want)
			}
		})
	}
}

func TestSafeSysctlsByKernel(t *testing.T) {
	names := func(kernel string) []string {
		var v *version.Version
		if kernel != "" {
			v = version.MustParseGeneric(kernel)
		}
		s, err := NewSysctls(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for n := range s.names {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	base := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies"}
	for _, tc := range []struct {
		kernel string
		more   []string
	}{
		{"", nil},
		{"3.10.0", nil},
		{"4.5.0", []string{"net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_keepalive_time"}},
		{"4.15.0", []string{"net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
			"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_notsent_lowat", "net.ipv4.tcp_rmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_wmem"}},
	} {
		want := slices.Sorted(slices.Values(append(slices.Clone(base), tc.more...)))
		if got := names(tc.kernel); !slices.Equal(got, want) {
			t.Errorf("kernel %q: safe sysctls %v, want %v", tc.kernel, got, want)
		}
	}
}

func TestKernelVersion(t *testing.T) {
	v, err := KernelVersion()
	if err != nil {
		t.Skip(err)
	}
	if v.Major() < 3 {
		t.Errorf("kernel version %v", v)
	}
}
