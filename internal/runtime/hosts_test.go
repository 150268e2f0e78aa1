package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

const localhostLines = "127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

func TestManagedHosts(t *testing.T) {
	aliases := []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}, {IP: "fd00::1", Hostnames: []string{"v6"}}}
	for _, tc := range []struct {
		name, hostname, domain string
		ips                    []string
		aliases                []corev1.HostAlias
		want                   string
	}{
		{
			name: "the pod's address under its hostname", hostname: "web", ips: []string{"10.1.0.5"},
			want: "# Kubernetes-managed hosts file.\n" + localhostLines + "10.1.0.5\tweb\n",
		},
		{
			name: "dual stack, with a subdomain: the FQDN first", hostname: "db-0", domain: "db.team.svc.cluster.local",
			ips: []string{"10.1.0.5", "fd00:10::5"},
			want: "# Kubernetes-managed hosts file.\n" + localhostLines +
				"10.1.0.5\tdb-0.db.team.svc.cluster.local\tdb-0\n" +
				"fd00:10::5\tdb-0.db.team.svc.cluster.local\tdb-0\n",
		},
		{
			name: "hostAliases last, one line per IP", hostname: "web", ips: []string{"10.1.0.5"}, aliases: aliases,
			want: "# Kubernetes-managed hosts file.\n" + localhostLines + "10.1.0.5\tweb\n" +
				"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\nfd00::1\tv6\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(managedHosts(tc.ips, tc.hostname, tc.domain, tc.aliases))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostNetworkHosts(t *testing.T) {
	node := "127.0.0.1\tlocalhost\n192.0.2.1\tnode1\n"
	got := string(hostNetworkHosts([]byte(node), []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}))
	want := "# Kubernetes-managed hosts file (host network).\n" + node + "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := string(hostNetworkHosts([]byte(node), nil)); got != "# Kubernetes-managed hosts file (host network).\n"+node {
		t.Errorf("without aliases: %q", got)
	}
}

func TestPodHostname(t *testing.T) {
	override := "override.example.host"
	for _, tc := range []struct {
		name                 string
		mod                  func(*corev1.Pod)
		wantHost, wantDomain string
	}{
		{name: "the pod's name", mod: func(*corev1.Pod) {}, wantHost: "web"},
		{name: "spec.hostname", mod: func(p *corev1.Pod) { p.Spec.Hostname = "h" }, wantHost: "h"},
		{name: "a subdomain", mod: func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "h", "s" }, wantHost: "h", wantDomain: "s.default.svc.cluster.local"},
		{name: "hostnameOverride wins, without a domain", mod: func(p *corev1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.HostnameOverride = "h", "s", &override
		}, wantHost: override},
		{name: "cut to a DNS label", mod: func(p *corev1.Pod) { p.Name = strings.Repeat("a", 62) + "-b" }, wantHost: strings.Repeat("a", 62)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, d := podHostname(newPod(tc.mod), "cluster.local")
			if h != tc.wantHost || d != tc.wantDomain {
				t.Errorf("got %q, %q; want %q, %q", h, d, tc.wantHost, tc.wantDomain)
			}
		})
	}
}

// hostsWorld is a world whose runtime has a pods directory, where the
// hosts files are written.
func hostsWorld(t *testing.T) (*world, string) {
	w := newWorld(t)
	pods := filepath.Join(t.TempDir(), "pods")
	w.rt = newRuntime(Options{Endpoint: "unix:///fake.sock", LogRoot: w.logRoot, PodsDir: pods, ClusterDomain: "cluster.local",
		Logger: w.rt.log, Clock: w.clock}, w.cri, w.images)
	return w, pods
}

// mountAt returns the host path the container config mounts at path.
func mountAt(t *testing.T, w *world, i int, path string) string {
	t.Helper()
	w.cri.mu.Lock()
	defer w.cri.mu.Unlock()
	for _, m := range w.cri.containers[i].Mounts {
		if m.ContainerPath == path {
			return m.HostPath
		}
	}
	return ""
}

// TestSyncPodHostsFile: the pod's hosts file is written once its sandbox
// has its address, and mounted into every container but the one that
// mounts /etc/hosts itself.
func TestSyncPodHostsFile(t *testing.T) {
	w, pods := hostsWorld(t)
	pod := newPod(withInit("setup"), withApp("own"), func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain = "web-0", "web"
		p.Spec.HostAliases = []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
		p.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts"}}
	})
	w.mustSync(pod) // the sandbox and the init container
	path := filepath.Join(pods, "u1", "etc-hosts")
	if got := mountAt(t, w, 0, "/etc/hosts"); got != path {
		t.Fatalf("init container's /etc/hosts from %q, want %q", got, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Kubernetes-managed hosts file.\n" + localhostLines +
		"192.168.192.168\tweb-0.web.default.svc.cluster.local\tweb-0\n" + // the fake runtime's sandbox address
		"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("hosts file (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("hosts file mode: %v, %v; want 0644", fi.Mode(), err)
	}

	w.exit(w.containerID("u1", "setup"), 0, 0)
	w.mustSync(pod) // the app containers, from the existing sandbox's address
	if got := mountAt(t, w, 1, "/etc/hosts"); got != path {
		t.Errorf("app container's /etc/hosts from %q, want %q", got, path)
	}
	if got := mountAt(t, w, 2, "/etc/hosts"); got != "" {
		t.Errorf("a container that mounts /etc/hosts itself got the managed file too (%q)", got)
	}
}

func TestSyncPodHostsFileHostNetwork(t *testing.T) {
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Skipf("no /etc/hosts on this machine: %v", err)
	}
	w, pods := hostsWorld(t)
	pod := newPod(withHostNetwork, func(p *corev1.Pod) {
		p.Spec.HostAliases = []corev1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo"}}}
	})
	w.mustSync(pod)
	path := filepath.Join(pods, "u1", "etc-hosts")
	if got := mountAt(t, w, 0, "/etc/hosts"); got != path {
		t.Fatalf("/etc/hosts from %q, want %q", got, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(hostNetworkHosts(node, pod.Spec.HostAliases)); string(data) != want {
		t.Errorf("hosts file = %q, want %q", data, want)
	}
}

// TestWriteInPlace: the file keeps its inode, which the running
// containers have mounted, and is left alone when it holds the content.
func TestWriteInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etc-hosts")
	if err := writeInPlace(path, []byte("a long first content\n")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte("edited by a container\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeInPlace(path, []byte("edited by a container\n")); err != nil {
		t.Fatal(err)
	}
	if err := writeInPlace(path, []byte("short\n")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("the file was replaced, not rewritten in place")
	}
	if data, _ := os.ReadFile(path); string(data) != "short\n" {
		t.Errorf("content = %q", data)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := writeInPlace(link, []byte("x")); err == nil {
		t.Error("a symlink was followed")
	}
}
