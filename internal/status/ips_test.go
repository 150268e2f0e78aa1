package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func TestGenerateHostAndPodIPs(t *testing.T) {
	type ips struct {
		HostIP  string
		HostIPs []string
		PodIP   string
		PodIPs  []string
	}
	for _, tc := range []struct {
		name        string
		hostNetwork bool
		runtimeIPs  []string
		hostIPs     []string
		want        ips
	}{
		{name: "pod network", runtimeIPs: []string{"10.1.0.5"}, hostIPs: []string{"192.168.1.10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10"}, PodIP: "10.1.0.5", PodIPs: []string{"10.1.0.5"}}},
		{name: "pod network before the sandbox has an IP", hostIPs: []string{"192.168.1.10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10"}}},
		{name: "dual-stack node, pod network", runtimeIPs: []string{"10.1.0.5", "fd00::5"}, hostIPs: []string{"192.168.1.10", "fd00:1::10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10", "fd00:1::10"}, PodIP: "10.1.0.5", PodIPs: []string{"10.1.0.5", "fd00::5"}}},
		{name: "host network takes the node's IP", hostNetwork: true, hostIPs: []string{"192.168.1.10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10"}, PodIP: "192.168.1.10", PodIPs: []string{"192.168.1.10"}}},
		{name: "host network on a dual-stack node takes both", hostNetwork: true, hostIPs: []string{"fd00:1::10", "192.168.1.10"},
			want: ips{HostIP: "fd00:1::10", HostIPs: []string{"fd00:1::10", "192.168.1.10"}, PodIP: "fd00:1::10", PodIPs: []string{"fd00:1::10", "192.168.1.10"}}},
		{name: "host network keeps IPs the runtime reports", hostNetwork: true, runtimeIPs: []string{"192.168.1.99"}, hostIPs: []string{"192.168.1.10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10"}, PodIP: "192.168.1.99", PodIPs: []string{"192.168.1.99"}}},
		{name: "host network adds the other family to a runtime IP", hostNetwork: true, runtimeIPs: []string{"192.168.1.99"}, hostIPs: []string{"192.168.1.10", "fd00:1::10"},
			want: ips{HostIP: "192.168.1.10", HostIPs: []string{"192.168.1.10", "fd00:1::10"}, PodIP: "192.168.1.99", PodIPs: []string{"192.168.1.99", "fd00:1::10"}}},
		{name: "host IPs unknown", hostNetwork: true},
		{name: "host IPs unknown, pod network", runtimeIPs: []string{"10.1.0.5"},
			want: ips{PodIP: "10.1.0.5", PodIPs: []string{"10.1.0.5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, nil, "main")
			pod.Spec.HostNetwork = tc.hostNetwork
			rs := &runtime.PodStatus{ID: pod.UID, IPs: tc.runtimeIPs}
			st := Generate(Input{Pod: pod, Runtime: rs, HostIPs: tc.hostIPs, Now: now})
			got := ips{HostIP: st.HostIP, PodIP: st.PodIP}
			for _, ip := range st.HostIPs {
				got.HostIPs = append(got.HostIPs, ip.IP)
			}
			for _, ip := range st.PodIPs {
				got.PodIPs = append(got.PodIPs, ip.IP)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("IPs (-want +got):\n%s", diff)
			}
		})
	}
}
