package podtypes

import (
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// HostPort is one port of the node that a container of a pod asks for.
type HostPort struct {
	Container string
	Port      int32
	// Protocol is TCP when the spec leaves it unset.
	Protocol corev1.Protocol
	// IP is the host address; "" means every address.
	IP string
}

// HostPorts lists the host ports a pod's containers ask for, init
// containers first, each in spec order.
func HostPorts(pod *corev1.Pod) []HostPort {
	var out []HostPort
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort == 0 {
					continue
				}
				proto := p.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				out = append(out, HostPort{Container: c.Name, Port: p.HostPort, Protocol: proto, IP: p.HostIP})
			}
		}
	}
	return out
}

// Conflicts tells whether p and q cannot both be bound: the same port and
// protocol, on the same address or with either on every address.
func (p HostPort) Conflicts(q HostPort) bool {
	if p.Port != q.Port || p.Protocol != q.Protocol {
		return false
	}
	if allAddresses(p.IP) || allAddresses(q.IP) || p.IP == q.IP {
		return true
	}
	pip := net.ParseIP(p.IP)
	return pip != nil && pip.Equal(net.ParseIP(q.IP))
}

func allAddresses(ip string) bool {
	return ip == "" || net.ParseIP(ip).IsUnspecified()
}

// String is the port as people write it: 8080/TCP, or 10.0.0.1:8080/TCP.
func (p HostPort) String() string {
	s := strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol)
	if p.IP != "" {
		return net.JoinHostPort(p.IP, s)
	}
	return s
}
