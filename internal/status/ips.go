package status

import (
	"net"

	corev1 "k8s.io/api/core/v1"
)

// setIPs fills the host and pod IPs. A host-network pod's sandbox has no IP
// of its own (the runtime reports none): like the kubelet, report the
// node's primary IP as its pod IP, and the node's second IP too when it is
// of the other family (a dual-stack node).
func setIPs(st *corev1.PodStatus, hostNetwork bool, podIPs, hostIPs []string) {
	for _, ip := range podIPs {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(hostIPs) > 0 {
		st.HostIP = hostIPs[0]
		for _, ip := range hostIPs {
			st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
		}
	}
	if hostNetwork && len(hostIPs) > 0 {
		if len(st.PodIPs) == 0 {
			st.PodIPs = []corev1.PodIP{{IP: hostIPs[0]}}
		}
		if len(hostIPs) == 2 && len(st.PodIPs) == 1 && isIPv4(st.PodIPs[0].IP) != isIPv4(hostIPs[1]) {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: hostIPs[1]})
		}
	}
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
}

// isIPv4 reports the family of an address; an IPv4-mapped IPv6 address is
// IPv4, as the kubelet counts it.
func isIPv4(ip string) bool {
	parsed := net.ParseIP(ip)
	return parsed != nil && parsed.To4() != nil
}
