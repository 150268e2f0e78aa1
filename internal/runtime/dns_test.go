package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestParseResolvConf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     resolvConf
		wantErr  bool
	}{
		{name: "empty", in: ""},
		{
			name: "a node's file",
			in:   "# generated\n; also a comment\nnameserver 10.0.0.2\nnameserver  fd00::53 \nsearch example.com. corp.example.com .\noptions ndots:2 edns0\n",
			want: resolvConf{servers: []string{"10.0.0.2", "fd00::53"}, searches: []string{"example.com", "corp.example.com"}, options: []string{"ndots:2", "edns0"}},
		},
		{
			name: "the last search line wins, options accumulate with the last of a name kept in place",
			in:   "search a.example\nsearch b.example\noptions ndots:2 timeout:1\noptions ndots:3 rotate\n",
			want: resolvConf{searches: []string{"b.example"}, options: []string{"ndots:3", "timeout:1", "rotate"}},
		},
		{name: "a nameserver without an address", in: "nameserver\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseResolvConf([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(resolvConf{}), cmpopts.EquateEmpty()); diff != "" && !tc.wantErr {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormPodDNS is the table of what each dnsPolicy gives on nodes
// configured in each way, and how a pod's dnsConfig is merged and cut.
func TestFormPodDNS(t *testing.T) {
	host := &resolvConf{servers: []string{"10.0.0.2"}, searches: []string{"corp.example"}, options: []string{"ndots:1", "timeout:2"}}
	cluster := nodeDNS{clusterDNS: []string{"10.96.0.10"}, clusterDomain: "cluster.local", host: host}
	pod := func(policy corev1.DNSPolicy, mods ...func(*corev1.Pod)) *corev1.Pod {
		p := newPod(func(p *corev1.Pod) { p.Namespace, p.Spec.DNSPolicy = "team", policy })
		for _, m := range mods {
			m(p)
		}
		return p
	}
	withConfig := func(c corev1.PodDNSConfig) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.DNSConfig = &c }
	}
	val := func(s string) *string { return &s }
	clusterSearch := []string{"team.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	missing := Warning{Reason: ReasonMissingClusterDNS, Node: true,
		Message: `nodeagent has no --cluster-dns configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`}

	// 40 search domains of 60 characters: more than 32, and more than
	// 2048 characters on the line.
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("d%02d.%s", i, strings.Repeat("x", 56)))
	}
	long := strings.Repeat(strings.Repeat("a", 63)+".", 4) + "example" // 263 characters

	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		node     nodeDNS
		want     *runtimeapi.DNSConfig
		warnings []Warning
	}{
		{
			name: "ClusterFirst: the cluster's server, its search domains before the node's, ndots:5",
			pod:  pod(corev1.DNSClusterFirst), node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}},
		},
		{
			name: "an unset policy is ClusterFirst",
			pod:  pod(""), node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}},
		},
		{
			name: "ClusterFirst without a cluster domain: the node's search domains only",
			pod:  pod(corev1.DNSClusterFirst), node: nodeDNS{clusterDNS: []string{"10.96.0.10", "fd00::10"}, host: host},
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "fd00::10"}, Searches: []string{"corp.example"}, Options: []string{"ndots:5"}},
		},
		{
			name: "ClusterFirst on the host network is Default",
			pod:  pod(corev1.DNSClusterFirst, withHostNetwork), node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"corp.example"}, Options: []string{"ndots:1", "timeout:2"}},
		},
		{
			name: "ClusterFirstWithHostNet on the host network",
			pod:  pod(corev1.DNSClusterFirstWithHostNet, withHostNetwork), node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}},
		},
		{
			name: "ClusterFirst without cluster DNS: Default, and a warning",
			pod:  pod(corev1.DNSClusterFirst), node: nodeDNS{clusterDomain: "cluster.local", host: host},
			want:     &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"corp.example"}, Options: []string{"ndots:1", "timeout:2"}},
			warnings: []Warning{missing},
		},
		{
			name: "Default: the node's resolv.conf",
			pod:  pod(corev1.DNSDefault), node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"corp.example"}, Options: []string{"ndots:1", "timeout:2"}},
		},
		{
			name: "Default without a resolv.conf: the pod's own host's resolver, IPv4",
			pod:  pod(corev1.DNSDefault), node: nodeDNS{hostIPs: []string{"192.0.2.1"}},
			want: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		},
		{
			name: "Default without a resolv.conf on a dual-stack node",
			pod:  pod(corev1.DNSDefault), node: nodeDNS{hostIPs: []string{"2001:db8::1", "192.0.2.1"}},
			want: &runtimeapi.DNSConfig{Servers: []string{"::1", "127.0.0.1"}, Searches: []string{"."}},
		},
		{
			name: "None: the pod's dnsConfig alone",
			pod: pod(corev1.DNSNone, withConfig(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"my.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: val("2")}, {Name: "edns0"}}})),
			node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"my.example"}, Options: []string{"ndots:2", "edns0"}},
		},
		{
			name: "ClusterFirst with a dnsConfig: added after, duplicates once, options replaced by name",
			pod: pod(corev1.DNSClusterFirst, withConfig(corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"},
				Searches: []string{"svc.cluster.local", "my.example"},
				Options:  []corev1.PodDNSConfigOption{{Name: "ndots", Value: val("2")}, {Name: "single-request-reopen"}, {Name: "timeout", Value: val("")}}})),
			node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "1.1.1.1"}, Searches: append(clusterSearch, "my.example"),
				Options: []string{"ndots:2", "single-request-reopen", "timeout"}},
		},
		{
			name: "more than 3 nameservers: the first 3, and a warning",
			pod:  pod(corev1.DNSDefault, withConfig(corev1.PodDNSConfig{Nameservers: []string{"10.0.0.3", "10.0.0.4", "10.0.0.5"}})),
			node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2", "10.0.0.3", "10.0.0.4"}, Searches: []string{"corp.example"}, Options: []string{"ndots:1", "timeout:2"}},
			warnings: []Warning{{Reason: ReasonDNSConfigForming,
				Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 10.0.0.3 10.0.0.4"}},
		},
		{
			name: "a search domain longer than a DNS name is dropped",
			pod:  pod(corev1.DNSNone, withConfig(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example", long, "b.example"}})),
			node: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"a.example", "b.example"}},
			warnings: []Warning{{Reason: ReasonDNSConfigForming,
				Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a.example b.example"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := formPodDNS(tc.pod, tc.node)
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("DNS config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("the search list is cut to 32 domains, then to 2048 characters", func(t *testing.T) {
		got, warnings := formPodDNS(pod(corev1.DNSNone, withConfig(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: many})), cluster)
		// 32 domains of 60 characters make 32*61-1 = 1951 characters: the
		// count is what cuts here.
		if diff := cmp.Diff(many[:32], got.Searches); diff != "" {
			t.Errorf("searches (-want +got):\n%s", diff)
		}
		if len(warnings) != 1 || warnings[0].Reason != ReasonDNSConfigForming {
			t.Errorf("warnings = %+v, want one DNSConfigForming", warnings)
		}
		longer := make([]string, 32)
		for i := range longer {
			longer[i] = fmt.Sprintf("d%02d.%s", i, strings.Repeat("y", 66)) // 70 characters
		}
		got, _ = formPodDNS(pod(corev1.DNSNone, withConfig(corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: longer})), cluster)
		// 29 domains of 70 make 29*71-1 = 2058 > 2048; 28 make 1987.
		if diff := cmp.Diff(longer[:28], got.Searches); diff != "" {
			t.Errorf("searches (-want +got):\n%s", diff)
		}
	})
}

// TestNewSandboxConfig checks what the sandbox's creation gets from the
// node's files and the pod: the resolv.conf read, the FQDN hostname, and
// the kubelet's refusal of an FQDN the kernel cannot hold.
func TestNewSandboxConfig(t *testing.T) {
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.2\nsearch corp.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.rt = newRuntime(Options{Endpoint: "unix:///fake.sock", LogRoot: w.logRoot, ClusterDNS: []string{"10.96.0.10"},
		ClusterDomain: "cluster.local", ResolvConf: resolv}, w.cri, w.images)
	yes := true

	c, warnings, err := w.rt.newSandboxConfig(newPod(func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "db-0", "db", &yes
	}), 0)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("newSandboxConfig: %v, warnings %v", err, warnings)
	}
	if got, want := c.Hostname, "db-0.db.default.svc.cluster.local"; got != want {
		t.Errorf("hostname = %q, want the FQDN %q", got, want)
	}
	want := &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"},
		Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}, Options: []string{"ndots:5"}}
	if diff := cmp.Diff(want, c.DnsConfig, protocmp.Transform()); diff != "" {
		t.Errorf("DNS (-want +got):\n%s", diff)
	}

	_, _, err = w.rt.newSandboxConfig(newPod(func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("h", 30), strings.Repeat("s", 20), &yes
	}), 0)
	if err == nil || !strings.Contains(err.Error(), "is too long (64 characters is the max, 77 characters requested)") {
		t.Errorf("err = %v, want the FQDN refused as too long", err)
	}

	if err := os.Remove(resolv); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.rt.newSandboxConfig(newPod(), 0); err == nil || !strings.Contains(err.Error(), "resolv.conf") {
		t.Errorf("err = %v, want the missing resolv.conf named", err)
	}
}
