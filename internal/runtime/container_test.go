package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestLinuxResources(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name string
		res  corev1.ResourceRequirements
		want *runtimeapi.LinuxContainerResources
	}{
		{"none", corev1.ResourceRequirements{}, &runtimeapi.LinuxContainerResources{}},
		{"cpu request: shares", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 256}},
		{"cpu limit: quota, and shares from it", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000}},
		{"tiny request: minimum shares", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 2}},
		{"memory limit", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("64Mi")}},
			&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 64 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := linuxResources(&corev1.Container{Resources: tc.res})
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSandboxConfigExtras(t *testing.T) {
	w := newWorld(t)
	share := true
	ndots := "2"
	pod := newPod(func(p *corev1.Pod) {
		p.Name = "a-very-long-pod-name-that-is-longer-than-a-dns-label-may-be-so-it-is-cut"
		p.Spec.ShareProcessNamespace = &share
		p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_forward", Value: "1"}}}
		p.Spec.DNSPolicy = corev1.DNSNone
		p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10"}, Searches: []string{"svc"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &ndots}, {Name: "edns0"}}}
		p.Spec.InitContainers = []corev1.Container{{Name: "i", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP}, {ContainerPort: 80}}
	})
	c, _, err := w.rt.newSandboxConfig(pod, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Cut to a DNS label, which must not end in a dash.
	if got, want := c.Hostname, "a-very-long-pod-name-that-is-longer-than-a-dns-label-may-be-so"; got != want {
		t.Errorf("hostname = %q, want %q", got, want)
	}
	if got := c.Linux.SecurityContext.NamespaceOptions.Pid; got != runtimeapi.NamespaceMode_POD {
		t.Errorf("pid namespace = %v, want POD (shareProcessNamespace)", got)
	}
	if !c.Linux.SecurityContext.Privileged {
		t.Error("sandbox not privileged although a container is")
	}
	if diff := cmp.Diff(map[string]string{"net.ipv4.ip_forward": "1"}, c.Linux.Sysctls); diff != "" {
		t.Errorf("sysctls (-want +got):\n%s", diff)
	}
	wantDNS := &runtimeapi.DNSConfig{Servers: []string{"10.0.0.10"}, Searches: []string{"svc"}, Options: []string{"ndots:2", "edns0"}}
	if diff := cmp.Diff(wantDNS, c.DnsConfig, protocmp.Transform()); diff != "" {
		t.Errorf("DNS (-want +got):\n%s", diff)
	}
	wantPorts := []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353}}
	if diff := cmp.Diff(wantPorts, c.PortMappings, protocmp.Transform()); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if c.Metadata.Attempt != 3 {
		t.Errorf("attempt = %d", c.Metadata.Attempt)
	}
}
