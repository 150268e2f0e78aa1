package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDNSFlags(t *testing.T) {
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseArgs(t, "--manifest-dir=/m", "--cluster-dns=10.96.0.10,fd00::a", "--cluster-domain=cluster.local", "--resolv-conf="+resolv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.96.0.10", "fd00::a"}, o.ClusterDNS); diff != "" {
		t.Errorf("--cluster-dns (-want +got):\n%s", diff)
	}
	if o.ClusterDomain != "cluster.local" || o.ResolvConf != resolv {
		t.Errorf("--cluster-domain %q, --resolv-conf %q", o.ClusterDomain, o.ResolvConf)
	}
	if o, err := parseArgs(t, "--manifest-dir=/m", "--resolv-conf="); err != nil || o.ResolvConf != "" {
		t.Errorf(`--resolv-conf="" (none): %q, %v`, o.ResolvConf, err)
	}
	if o, err := parseArgs(t, "--manifest-dir=/m"); err == nil && o.ResolvConf != "/etc/resolv.conf" {
		t.Errorf("--resolv-conf defaults to %q, want /etc/resolv.conf", o.ResolvConf)
	}
}

func TestValidateNamesEveryBadDNSFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-dns=10.96.0.10,dns.example"}, `--cluster-dns "dns.example" is not an IP address`},
		{[]string{"--cluster-dns=fe80::1%eth0"}, `--cluster-dns "fe80::1%eth0" is not an IP address`},
		{[]string{"--cluster-domain=Cluster_Local"}, `--cluster-domain "Cluster_Local"`},
		{[]string{"--resolv-conf=resolv.conf"}, `--resolv-conf "resolv.conf" must be an absolute path`},
		{[]string{"--resolv-conf=/nonexistent/resolv.conf"}, "--resolv-conf: open /nonexistent/resolv.conf: no such file or directory"},
		{[]string{"--resolv-conf=" + t.TempDir()}, "is a directory"},
	} {
		_, err := parseArgs(t, append([]string{"--manifest-dir=/m"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error = %v, want one with %q", tc.args, err, tc.want)
		}
	}
}
