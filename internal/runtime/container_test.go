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
		{"none: the least shares, as the kubelet's", corev1.ResourceRequirements{}, &runtimeapi.LinuxContainerResources{CpuShares: 2}},
		{"cpu request: shares", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 256}},
		{"cpu limit: quota, and shares from it", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000}},
		{"tiny request: minimum shares", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1m")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 2}},
		{"memory limit", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("64Mi")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 2, MemoryLimitInBytes: 64 << 20}},
		{"huge pages of two sizes, in the CRI's notation", corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"hugepages-2Mi": q("4Mi"), "hugepages-1Gi": q("2Gi"), corev1.ResourceMemory: q("8Mi")}},
			&runtimeapi.LinuxContainerResources{CpuShares: 2, MemoryLimitInBytes: 8 << 20, HugepageLimits: []*runtimeapi.HugepageLimit{
				{PageSize: "1GB", Limit: 2 << 30}, {PageSize: "2MB", Limit: 4 << 20}}}},
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
		p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
			{Name: "net.ipv4.ip_forward", Value: "1"}, {Name: "kernel/shm_rmid_forced", Value: "1"}, {Name: "net/ipv4/conf/eth0.100/rp_filter", Value: "2"}}}
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
	// Written with dots, as the kubelet hands them over.
	wantSysctls := map[string]string{"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "1", "net.ipv4.conf.eth0/100.rp_filter": "2"}
	if diff := cmp.Diff(wantSysctls, c.Linux.Sysctls); diff != "" {
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

func TestMountPropagation(t *testing.T) {
	plain := &corev1.Container{Name: "c"}
	privileged := &corev1.Container{Name: "c", SecurityContext: &corev1.SecurityContext{Privileged: new(true)}}
	for _, tc := range []struct {
		c       *corev1.Container
		mode    corev1.MountPropagationMode
		want    runtimeapi.MountPropagation
		refused bool
	}{
		{plain, "", runtimeapi.MountPropagation_PROPAGATION_PRIVATE, false},
		{plain, corev1.MountPropagationNone, runtimeapi.MountPropagation_PROPAGATION_PRIVATE, false},
		{plain, corev1.MountPropagationHostToContainer, runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, false},
		{plain, corev1.MountPropagationBidirectional, 0, true},
		{privileged, corev1.MountPropagationBidirectional, runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, false},
		{plain, "Sideways", 0, true},
	} {
		got, err := mountPropagation(tc.c, Mount{ContainerPath: "/m", Propagation: tc.mode})
		if (err != nil) != tc.refused || got != tc.want {
			t.Errorf("%q (privileged %v): %v, %v; want %v, refused %v", tc.mode, tc.c.SecurityContext != nil, got, err, tc.want, tc.refused)
		}
	}
}

// On a node that runs SELinux, the mounts the volumes marked for it are
// relabelled by the runtime; elsewhere none is, as the kubelet asks only
// where SELinux is enabled.
func TestSELinuxRelabel(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		w := newWorld(t)
		w.rt.opts.SELinuxEnabled = enabled
		pod := newPod()
		mounts := ContainerMounts{pod.Spec.Containers[0].Name: {
			{ContainerPath: "/data", HostPath: "/var/lib/x/data", SELinuxRelabel: true},
			{ContainerPath: "/host", HostPath: "/srv"},
		}}
		if _, err := w.sync(pod, mounts); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, m := range w.lastContainerConfig().Mounts {
			got[m.ContainerPath] = m.SelinuxRelabel
		}
		want := map[string]bool{"/data": enabled, "/host": false}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SELinux enabled %v: relabel by mount (-want +got):\n%s", enabled, diff)
		}
	}
}
