package podtypes

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHostPorts(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "proxy", Ports: []corev1.ContainerPort{{ContainerPort: 15000, HostPort: 15000}}}},
		Containers: []corev1.Container{{Name: "web", Ports: []corev1.ContainerPort{
			{ContainerPort: 80},
			{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1"},
			{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP},
		}}},
	}}
	want := []HostPort{
		{Container: "proxy", Port: 15000, Protocol: corev1.ProtocolTCP},
		{Container: "web", Port: 8080, Protocol: corev1.ProtocolTCP, IP: "127.0.0.1"},
		{Container: "web", Port: 53, Protocol: corev1.ProtocolUDP},
	}
	got := HostPorts(pod)
	if !slices.Equal(want, got) {
		t.Fatalf("HostPorts = %+v\nwant %+v", got, want)
	}
	if s := got[1].String(); s != "127.0.0.1:8080/TCP" {
		t.Errorf("String() = %q", s)
	}
	if s := got[2].String(); s != "53/UDP" {
		t.Errorf("String() = %q", s)
	}
}

func TestHostPortConflicts(t *testing.T) {
	tcp := func(port int32, ip string) HostPort {
		return HostPort{Port: port, Protocol: corev1.ProtocolTCP, IP: ip}
	}
	for _, tc := range []struct {
		name string
		a, b HostPort
		want bool
	}{
		{"same port, every address", tcp(80, ""), tcp(80, ""), true},
		{"every address against one", tcp(80, ""), tcp(80, "10.0.0.1"), true},
		{"one against every address", tcp(80, "10.0.0.1"), tcp(80, "0.0.0.0"), true},
		{"the same address, spelled twice", tcp(80, "::1"), tcp(80, "0:0:0:0:0:0:0:1"), true},
		{"two addresses", tcp(80, "10.0.0.1"), tcp(80, "10.0.0.2"), false},
		{"two ports", tcp(80, ""), tcp(81, ""), false},
		{"two protocols", tcp(53, ""), HostPort{Port: 53, Protocol: corev1.ProtocolUDP}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Conflicts(tc.b); got != tc.want {
				t.Errorf("%v.Conflicts(%v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := tc.b.Conflicts(tc.a); got != tc.want {
				t.Errorf("not symmetric: %v.Conflicts(%v) = %v", tc.b, tc.a, got)
			}
		})
	}
}
