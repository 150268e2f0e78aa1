package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A pod's resolver configuration and hosts file as the kubelet makes
// them, read from inside running containers: containerd writes the
// resolv.conf the agent gives the sandbox, and the agent writes and mounts
// the hosts file.

// nodeResolvConf is the agent's --resolv-conf in these tests: a node's
// resolver file that no real one is like.
const nodeResolvConf = "# the node's\nnameserver 192.0.2.53\nsearch corp.example\noptions timeout:2\n"

func newDNSAgent(t *testing.T) *agentHarness {
	t.Helper()
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte(nodeResolvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	return newAgent(t, "--cluster-dns=10.96.0.10,10.96.0.11", "--cluster-domain=cluster.local", "--resolv-conf="+resolv)
}

// resolvLines is a resolv.conf without comments and blank lines.
func resolvLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func TestBinaryDNSAndHostsPodNetwork(t *testing.T) {
	h := newDNSAgent(t)
	own := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(own, []byte("# the container's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := testPod("dns", shContainer("app", sleepForever), shContainer("own", sleepForever))
	pod.Spec.HostNetwork = false
	pod.Spec.Hostname, pod.Spec.Subdomain = "web-0", "web"
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	pod.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"extra.example"},
		Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "hosts", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: own}}}}
	pod.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts"}}
	h.writeManifest(pod)
	p := h.waitPod("dns", "running", 60*time.Second, func(p localapi.Pod) bool {
		return runningContainer("app")(p) && runningContainer("own")(p) && p.PodIP != ""
	})

	// ClusterFirst: the cluster's servers; the namespace's, the cluster's
	// and the node's search domains, then the pod's; its ndots replaces 5.
	want := []string{
		"search default.svc.cluster.local svc.cluster.local cluster.local corp.example extra.example",
		"nameserver 10.96.0.10", "nameserver 10.96.0.11", "options ndots:2 edns0",
	}
	if got := resolvLines(h.exec("dns", "app", "cat", "/etc/resolv.conf")); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("/etc/resolv.conf:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	hosts := h.exec("dns", "app", "cat", "/etc/hosts")
	for _, line := range []string{
		"127.0.0.1\tlocalhost\n",
		"::1\tlocalhost ip6-localhost ip6-loopback\n",
		p.PodIP + "\tweb-0.web.default.svc.cluster.local\tweb-0\n",
		"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n",
	} {
		if !strings.Contains(hosts, line) {
			t.Errorf("/etc/hosts lacks %q:\n%s", line, hosts)
		}
	}
	if !strings.HasPrefix(hosts, "# Kubernetes-managed hosts file.\n") {
		t.Errorf("/etc/hosts does not start with the managed header:\n%s", hosts)
	}
	if got := h.exec("dns", "own", "cat", "/etc/hosts"); got != "# the container's own\n" {
		t.Errorf("the container that mounts its own /etc/hosts sees %q", got)
	}
	// Without setHostnameAsFQDN the hostname is the short one.
	if got := strings.TrimSpace(h.exec("dns", "app", "hostname")); got != "web-0" {
		t.Errorf("hostname = %q, want web-0", got)
	}
}

func TestBinaryDNSAndHostsFQDNAndDefault(t *testing.T) {
	h := newDNSAgent(t)
	pod := testPod("fqdn", shContainer("app", sleepForever))
	pod.Spec.HostNetwork = false
	pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "db-0", "db", ptr.To(true)
	pod.Spec.DNSPolicy = corev1.DNSDefault
	h.writeManifest(pod)
	h.waitPod("fqdn", "running", 60*time.Second, runningContainer("app"))

	if got := strings.TrimSpace(h.exec("fqdn", "app", "hostname")); got != "db-0.db.default.svc.cluster.local" {
		t.Errorf("hostname = %q, want the FQDN", got)
	}
	// Default: the node's resolver file.
	want := "search corp.example\nnameserver 192.0.2.53\noptions timeout:2"
	if got := strings.Join(resolvLines(h.exec("fqdn", "app", "cat", "/etc/resolv.conf")), "\n"); got != want {
		t.Errorf("/etc/resolv.conf:\n%s\nwant\n%s", got, want)
	}
}

func TestBinaryDNSAndHostsHostNetwork(t *testing.T) {
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	h := newDNSAgent(t)
	pod := testPod("hostnet", shContainer("app", sleepForever)) // on the host's network
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	h.writeManifest(pod)
	h.waitPod("hostnet", "running", 60*time.Second, runningContainer("app"))

	want := "# Kubernetes-managed hosts file (host network).\n" + string(node) +
		"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if got := h.exec("hostnet", "app", "cat", "/etc/hosts"); got != want {
		t.Errorf("/etc/hosts:\n%s\nwant\n%s", got, want)
	}
	// ClusterFirst on the host network resolves as the node does.
	want = "search corp.example\nnameserver 192.0.2.53\noptions timeout:2"
	if got := strings.Join(resolvLines(h.exec("hostnet", "app", "cat", "/etc/resolv.conf")), "\n"); got != want {
		t.Errorf("/etc/resolv.conf:\n%s\nwant\n%s", got, want)
	}
}
