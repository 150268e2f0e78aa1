package configfile

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// kubeletFlags is a flag set holding some of the table's flags, of the
// types nodeagent gives them.
type kubeletFlags struct {
	fs            *pflag.FlagSet
	dir, url      string
	headers       []string
	sync          time.Duration
	dns, taints   []string
	hard, grace   string
	reserved      map[string]string
	maxPods       int32
	gcHigh        int
	rotate        bool
	serve, verb   string
	logFlushEvery time.Duration
}

func newKubeletFlags() *kubeletFlags {
	k := &kubeletFlags{fs: pflag.NewFlagSet("t", pflag.ContinueOnError), rotate: true}
	k.fs.StringVar(&k.dir, "manifest-dir", "", "")
	k.fs.StringVar(&k.url, "manifest-url", "", "")
	k.fs.StringArrayVar(&k.headers, "manifest-url-header", nil, "")
	k.fs.DurationVar(&k.sync, "sync-frequency", time.Minute, "")
	k.fs.StringSliceVar(&k.dns, "cluster-dns", nil, "")
	k.fs.StringSliceVar(&k.taints, "register-with-taints", nil, "")
	k.fs.StringVar(&k.hard, "eviction-hard", "memory.available<100Mi", "")
	k.fs.StringVar(&k.grace, "eviction-soft-grace-period", "", "")
	k.fs.StringToStringVar(&k.reserved, "system-reserved", nil, "")
	k.fs.Int32Var(&k.maxPods, "max-pods", 110, "")
	k.fs.IntVar(&k.gcHigh, "image-gc-high-threshold", 85, "")
	k.fs.BoolVar(&k.rotate, "rotate-certificates", true, "")
	k.fs.StringVar(&k.serve, "serve-address", "127.0.0.1:10248", "")
	k.fs.StringVar(&k.verb, "v", "0", "")
	k.fs.DurationVar(&k.logFlushEvery, "log-flush-frequency", 5*time.Second, "")
	return k
}

func writeKubeletConfig(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := writeFile(t, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+body)
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKubeletConfigurationSetsTheFlags(t *testing.T) {
	k := newKubeletFlags()
	path := writeKubeletConfig(t, `staticPodPath: /etc/kubernetes/manifests
staticPodURL: https://example.com/pods
staticPodURLHeader:
  Authorization: ["Bearer x"]
  X-Two: [a, b]
syncFrequency: 30s
clusterDNS: [10.96.0.10, fd00::a]
registerWithTaints:
- {key: dedicated, value: edge, effect: NoSchedule}
- {key: gpu, effect: NoExecute}
evictionHard: {memory.available: 200Mi, nodefs.available: 10%}
evictionSoftGracePeriod: {memory.available: 1m30s}
systemReserved: {cpu: 100m, memory: 1Gi}
maxPods: 42
imageGCHighThresholdPercent: 0
rotateCertificates: false
healthzPort: 10999
logging:
  verbosity: 3
  flushFrequency: 2000000000
`, 0o600)
	notes, err := Apply(k.fs, path)
	if err != nil || len(notes) != 0 {
		t.Fatalf("Apply: notes %q, error %v", notes, err)
	}
	got := []any{k.dir, k.url, k.headers, k.sync, k.dns, k.taints, k.hard, k.grace, k.reserved, k.maxPods, k.gcHigh, k.rotate, k.serve, k.verb, k.logFlushEvery}
	want := []any{"/etc/kubernetes/manifests", "https://example.com/pods", []string{"Authorization:Bearer x", "X-Two:a", "X-Two:b"},
		30 * time.Second, []string{"10.96.0.10", "fd00::a"}, []string{"dedicated=edge:NoSchedule", "gpu:NoExecute"},
		"memory.available<200Mi,nodefs.available<10%", "memory.available=1m30s", map[string]string{"cpu": "100m", "memory": "1Gi"},
		int32(42), 0, false, "127.0.0.1:10999", "3", 2 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
}

// A zero of a non-pointer field is the kubelet's "unset", as kubeadm
// writes it; a pointer's zero (imageGCHighThresholdPercent: 0) and a bool
// are set.
func TestKubeletConfigurationZeroIsUnset(t *testing.T) {
	k := newKubeletFlags()
	path := writeKubeletConfig(t, "syncFrequency: 0s\nmaxPods: 0\nstaticPodPath: \"\"\nclusterDNS: []\nimageGCHighThresholdPercent: 0\n", 0o600)
	if _, err := Apply(k.fs, path); err != nil {
		t.Fatal(err)
	}
	if k.sync != time.Minute || k.maxPods != 110 || k.dns != nil || k.gcHigh != 0 {
		t.Errorf("sync %v, max pods %d, cluster DNS %q, image GC high %d", k.sync, k.maxPods, k.dns, k.gcHigh)
	}
}

func TestKubeletConfigurationCommandLineWins(t *testing.T) {
	k := newKubeletFlags()
	if err := k.fs.Parse([]string{"--sync-frequency=5s", "--serve-address=127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	path := writeKubeletConfig(t, "syncFrequency: 30s\nmaxPods: 42\nhealthzPort: 10999\n", 0o600)
	if _, err := Apply(k.fs, path); err != nil {
		t.Fatal(err)
	}
	if k.sync != 5*time.Second || k.maxPods != 42 || k.serve != "127.0.0.1:1" {
		t.Errorf("sync %v, max pods %d, serve %q", k.sync, k.maxPods, k.serve)
	}
}

func TestKubeletConfigurationRefusals(t *testing.T) {
	for _, tc := range []struct {
		body string
		mode os.FileMode
		want string
	}{
		{"cpuManagerPolicy: static\n", 0o600, `cpuManagerPolicy is set ("static") but nodeagent does not implement it: nodeagent has no CPU manager`},
		{"featureGates: {Foo: true}\n", 0o600, "featureGates is set"},
		{"authentication:\n  anonymous:\n    enabled: true\n", 0o600, "authentication.anonymous.enabled is set (true) but nodeagent does not implement it: the node API refuses anonymous requests"},
		// The table's field whose flag this binary lacks.
		{"clusterDomain: cluster.local\n", 0o600, "clusterDomain is set, and this build of nodeagent has no --cluster-domain"},
		{"bogus: 1\n", 0o600, `unknown field "bogus"`},
		{"staticPodURLHeader: {Authorization: [x]}\n", 0o644, "chmod 0600"},
	} {
		_, err := Apply(newKubeletFlags().fs, writeKubeletConfig(t, tc.body, tc.mode))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
	p := writeFile(t, "apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n")
	if _, err := Apply(newKubeletFlags().fs, p); err == nil || !strings.Contains(err.Error(), "kubelet.config.k8s.io/v1beta1") {
		t.Errorf("another version: error %v", err)
	}
}

func TestKubeletConfigurationHarmlessFieldsAreNoted(t *testing.T) {
	path := writeKubeletConfig(t, "failCgroupV1: false\nauthorization:\n  mode: Webhook\n", 0o600)
	notes, err := Apply(newKubeletFlags().fs, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !strings.Contains(notes[0]+notes[1], "failCgroupV1: false is not a setting of nodeagent") {
		t.Errorf("notes %q", notes)
	}
}

// A tool reading some settings skips what it has no flag for, and what
// nodeagent refuses: the agent says so.
func TestApplyKnownKubeletConfiguration(t *testing.T) {
	k := newKubeletFlags()
	path := writeKubeletConfig(t, "staticPodPath: /m\ncpuManagerPolicy: static\nclusterDomain: cluster.local\n", 0o600)
	if err := ApplyKnown(k.fs, path); err != nil || k.dir != "/m" {
		t.Errorf("ApplyKnown: %v, manifest dir %q", err, k.dir)
	}
}
