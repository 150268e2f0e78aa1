package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodeagent/nodeagent/internal/configfile"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/spf13/pflag"
)

// parseArgs parses args (and the config file they name) into fresh
// Options, as Main does.
func parseArgs(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o, _, err := parseArgsNotes(t, args...)
	return o, err
}

// parseArgsNotes is parseArgs that also returns the notes Main logs.
func parseArgsNotes(t *testing.T, args ...string) (*Options, []string, error) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	notes, err := settle(fs, o)
	return o, notes, err
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nodeagent.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	o, err := parseArgs(t, "--manifest-dir=/etc/nodeagent/manifests", "--node-name=node1")
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"root-dir":                            {o.RootDir, "/var/lib/nodeagent"},
		"local-api-socket":                    {o.LocalAPISocket, "/var/lib/nodeagent/nodeagent.sock"},
		"serve-address":                       {o.ServeAddress, "127.0.0.1:10248"},
		"pod-log-dir":                         {o.PodLogDir, "/var/log/pods"},
		"cgroup-root":                         {o.CgroupRoot, "/nodeagent"},
		"cgroup-driver":                       {o.CgroupDriver, "cgroupfs"},
		"sync-frequency":                      {o.SyncFrequency, time.Minute},
		"relist-interval":                     {o.RelistInterval, time.Second},
		"housekeeping-interval":               {o.HousekeepingInterval, 2 * time.Second},
		"runtime-request-timeout":             {o.RuntimeRequestTimeout, 2 * time.Minute},
		"eviction-pressure-transition-period": {o.Eviction.PressureTransition, 5 * time.Minute},
		"gc-percent":                          {o.GCPercent, 50},
		// Connected mode, as a kubelet joined by kubeadm.
		"cert-dir":                     {o.CertDir, "/var/lib/nodeagent/pki"},
		"rotate-certificates":          {o.RotateCertificates, true},
		"max-pods":                     {o.MaxPods, int32(110)},
		"node-status-update-frequency": {o.NodeStatusUpdateFrequency, 10 * time.Second},
		"node-status-report-frequency": {o.NodeStatusReportFrequency, 5 * time.Minute},
		"node-lease-duration-seconds":  {o.NodeLeaseDurationSeconds, int32(40)},
		"address":                      {o.Address, "0.0.0.0"},
		"port":                         {o.Port, int32(10250)},
		"enable-system-log-handler":    {o.EnableSystemLogHandler, true},
		"eviction-hard":                {o.Eviction.Hard, "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%,pid.available<5%"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("--%s = %v, want %v", name, c[0], c[1])
		}
	}
}

// manifestctl names the relist interval's default without linking the
// PLEG; it must stay the PLEG's.
func TestManifestctlKnowsTheRelistDefault(t *testing.T) {
	if configfile.DefaultRelistInterval != pleg.DefaultInterval {
		t.Errorf("configfile.DefaultRelistInterval = %v, pleg.DefaultInterval = %v", configfile.DefaultRelistInterval, pleg.DefaultInterval)
	}
}

func TestSocketFollowsRootDir(t *testing.T) {
	o, err := parseArgs(t, "--manifest-dir=/m", "--root-dir=/tmp/na")
	if err != nil {
		t.Fatal(err)
	}
	if o.LocalAPISocket != "/tmp/na/nodeagent.sock" {
		t.Errorf("socket = %s, want it under --root-dir", o.LocalAPISocket)
	}
}

func TestConfigFileSetsWhatFlagsDoNot(t *testing.T) {
	cfg := writeConfig(t, `
manifest-dir: /from/file
manifest-url: http://127.0.0.1:9000/pods
manifest-url-header:
- "Authorization: Bearer t"
- "X-Node: n1"
sync-frequency: 30s
node-name: file-node
root-dir: /from/file/root
v: 3
`)
	o, err := parseArgs(t, "--config", cfg, "--node-name=flag-node", "--root-dir=/from/flag")
	if err != nil {
		t.Fatal(err)
	}
	if o.ManifestDir != "/from/file" || o.ManifestURL != "http://127.0.0.1:9000/pods" || o.SyncFrequency != 30*time.Second {
		t.Errorf("file settings not applied: dir %q url %q sync %v", o.ManifestDir, o.ManifestURL, o.SyncFrequency)
	}
	if diff := cmp.Diff([]string{"Authorization: Bearer t", "X-Node: n1"}, o.ManifestURLHeaders); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if o.NodeName != "flag-node" || o.RootDir != "/from/flag" {
		t.Errorf("flags must win over the file: node %q root %q", o.NodeName, o.RootDir)
	}
	if o.Logging.Verbosity != 3 {
		t.Errorf("logging verbosity = %v, want 3 from the file", o.Logging.Verbosity)
	}
}

func TestConfigFileErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":  {"manifest-dirr: /x\n", `unknown setting "manifest-dirr"`},
		"bad duration": {"manifest-dir: /x\nsync-frequency: often\n", "sync-frequency"},
		"nested value": {"manifest-dir: {a: b}\n", "manifest-dir"},
		"not yaml":     {"manifest-dir: [\n", "nodeagent.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseArgs(t, "--config", writeConfig(t, tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := parseArgs(t, "--config=/nonexistent/nodeagent.yaml"); err == nil || !strings.Contains(err.Error(), "/nonexistent/nodeagent.yaml") {
		t.Errorf("missing config file: error = %v, want one naming it", err)
	}
}

func TestValidateNamesEveryBadFlag(t *testing.T) {
	_, err := parseArgs(t, "--node-name=Bad_Name", "--sync-frequency=0s", "--manifest-url-header=novalue",
		"--root-dir=relative", "--serve-address=nope", "--gc-percent=0")
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"no pod source", "--node-name", "--sync-frequency", "--manifest-url-header", "--root-dir", "--serve-address", "--gc-percent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

func TestValidateNamesEveryBadConnectedFlag(t *testing.T) {
	_, err := parseArgs(t, "--manifest-dir=/m", "--node-name=n", "--bootstrap-kubeconfig=/b",
		"--node-labels=node-role.kubernetes.io/worker=", "--register-with-taints=k=v:Sometimes",
		"--system-reserved=gpu=1", "--kube-reserved=memory=lots", "--max-pods=0", "--node-ip=10.0.0",
		"--eviction-hard=memory.available<-1", "--node-status-update-frequency=0s", "--node-lease-duration-seconds=2")
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"--bootstrap-kubeconfig needs a --kubeconfig", "--node-labels", "--register-with-taints",
		"--system-reserved", "--kube-reserved", "--max-pods", "--node-ip", "--eviction-hard",
		"--node-status-update-frequency", "--node-lease-duration-seconds"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

func TestAllowedUnsafeSysctls(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"kernel.msgmax,net.core.somaxconn", true},
		{"kernel.msg*,net.*,fs.mqueue.*", true},
		{"kernel.panic", false},       // not namespaced: it would change the node
		{"kernel.*", false},           // kernel.* holds sysctls of no namespace
		{"net.*.rp_filter", false},    // * ends the pattern only
		{"Net.Core.Somaxconn", false}, // not a sysctl name
	} {
		o, err := parseArgs(t, "--manifest-dir=/m", "--allowed-unsafe-sysctls="+tc.value)
		switch {
		case tc.ok && err != nil:
			t.Errorf("--allowed-unsafe-sysctls=%s: %v", tc.value, err)
		case tc.ok && len(o.AllowedUnsafeSysctls) != len(strings.Split(tc.value, ",")):
			t.Errorf("--allowed-unsafe-sysctls=%s read as %q", tc.value, o.AllowedUnsafeSysctls)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "--allowed-unsafe-sysctls")):
			t.Errorf("--allowed-unsafe-sysctls=%s: error %v, want one naming the flag", tc.value, err)
		}
	}
}

func TestStrayArgumentsAreRefused(t *testing.T) {
	if _, err := parseArgs(t, "--manifest-dir=/m", "extra"); err == nil {
		t.Error("a stray argument was accepted")
	}
}

func TestURLHeader(t *testing.T) {
	o := &Options{ManifestURLHeaders: []string{"Authorization: Bearer a:b", "X-A:1", "X-A: 2"}}
	h, err := o.urlHeader()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer a:b" || len(h.Values("X-A")) != 2 {
		t.Errorf("header = %v", h)
	}
}

func TestProfilingNeedsAServeAddress(t *testing.T) {
	if _, err := parseArgs(t, "--manifest-dir=/m", "--serve-address=", "--profiling"); err == nil {
		t.Error("--profiling without --serve-address was accepted")
	}
	o, err := parseArgs(t, "--manifest-dir=/m", "--profiling")
	if err != nil || !o.Profiling {
		t.Errorf("--profiling on the default address: profiling %v, error %v", o.Profiling, err)
	}
}

func TestValidateNamesEveryBadEvictionFlag(t *testing.T) {
	_, err := parseArgs(t, "--manifest-dir=/m", "--node-name=n",
		"--eviction-soft=memory.available<1Gi,nodefs.available<20%", "--eviction-soft-grace-period=memory.available=1m,pid.available=10s",
		"--eviction-minimum-reclaim=memory.available<1Gi")
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"--eviction-minimum-reclaim: threshold \"memory.available<1Gi\": want signal=value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	_, err = parseArgs(t, "--manifest-dir=/m", "--node-name=n",
		"--eviction-soft=memory.available<1Gi,nodefs.available<20%", "--eviction-soft-grace-period=memory.available=1m,pid.available=10s",
	)
	for _, want := range []string{"the soft threshold of nodefs.available has no grace period", "pid.available has a grace period but no soft threshold"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	o, err := parseArgs(t, "--manifest-dir=/m", "--node-name=n", "--eviction-soft=memory.available<1Gi", "--eviction-soft-grace-period=memory.available=90s")
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.evictionPolicy()
	if err != nil || p.SoftGracePeriods["memory.available"] != 90*time.Second || p.Soft["memory.available"].Quantity.String() != "1Gi" {
		t.Errorf("policy %+v, %v", p, err)
	}
}
