package app

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestConfigzReadsBackAsConfig: what /configz shows, given back as a
// --config file, is the same configuration: the table that writes the
// one reads the other, and every field /configz shows is one nodeagent
// reads (or, as its authentication settings, one it takes for harmless).
func TestConfigzReadsBackAsConfig(t *testing.T) {
	o := NewOptions()
	o.ManifestDir = "/etc/kubernetes/manifests"
	o.ManifestURL = "https://example.com/pods"
	o.SyncFrequency = 42 * time.Second
	o.ClusterDNS = []string{"10.96.0.10", "fd00::a"}
	o.ClusterDomain = "cluster.local"
	o.ClientCAFile = writeConfig(t, "") // a file that exists
	o.Eviction.Hard = "memory.available<100Mi,nodefs.available<10%"
	o.Eviction.SoftGracePeriods = "memory.available=1m30s"
	o.Eviction.Soft = "memory.available<200Mi"
	o.SystemReserved = map[string]string{"cpu": "100m", "memory": "512Mi"}
	o.RegisterWithTaints = []string{"dedicated=edge:NoSchedule", "gpu:NoExecute"}
	o.ImagePulls.Serialize, o.ImagePulls.MaxParallel = false, 3
	o.ImageGC.HighThresholdPercent = 90
	o.MaxPods = 42
	// Not rotateCertificates: false, which the field's omitempty drops
	// from /configz (the kubelet's default, not nodeagent's); a file
	// that says it is read (TestKubeletConfigurationSetsTheFlags).
	o.EnableProfilingHandler = false
	o.ServeAddress = "0.0.0.0:10999"

	before := o.kubeletConfig()
	data, err := yaml.Marshal(before)
	if err != nil {
		t.Fatal(err)
	}
	read, err := parseArgs(t, "--config", writeConfig(t, string(data)))
	if err != nil {
		t.Fatalf("/configz's output as --config: %v\n%s", err, data)
	}
	if diff := cmp.Diff(before, read.kubeletConfig()); diff != "" {
		t.Errorf("read back (-/configz +read):\n%s", diff)
	}
	if read.ServeAddress != "0.0.0.0:10999" || strings.Join(read.RegisterWithTaints, " ") != "dedicated=edge:NoSchedule gpu:NoExecute" {
		t.Errorf("serve address %q, taints %q", read.ServeAddress, read.RegisterWithTaints)
	}
}

// TestKubeadmConfigKeepsNodeagentsDefaults: kubeadm writes zeros for the
// durations it leaves to the kubelet's defaults (syncFrequency: 0s);
// they keep nodeagent's, as they keep the kubelet's.
func TestKubeadmConfigKeepsNodeagentsDefaults(t *testing.T) {
	caFile := writeConfig(t, "") // a file that exists
	file := writeConfig(t, `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: `+caFile+`
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
crashLoopBackOff: {}
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
rotateCertificates: true
runtimeRequestTimeout: 0s
staticPodPath: /etc/kubernetes/manifests
syncFrequency: 0s
`)
	o, notes, err := parseArgsNotes(t, "--config", file, "--cluster-domain=example.org")
	if err != nil {
		t.Fatal(err)
	}
	def := NewOptions()
	checks := map[string][2]any{
		"staticPodPath":          {o.ManifestDir, "/etc/kubernetes/manifests"},
		"cgroupDriver":           {o.CgroupDriver, "systemd"},
		"clusterDNS":             {o.ClusterDNS, []string{"10.96.0.10"}},
		"clusterDomain (flag)":   {o.ClusterDomain, "example.org"},
		"clientCAFile":           {o.ClientCAFile, caFile},
		"syncFrequency: 0s":      {o.SyncFrequency, def.SyncFrequency},
		"fileCheckFrequency":     {o.FileCheckFrequency, def.FileCheckFrequency},
		"runtimeRequestTimeout":  {o.RuntimeRequestTimeout, def.RuntimeRequestTimeout},
		"containerRuntime: \"\"": {o.CRIEndpoint, def.CRIEndpoint},
		"healthz":                {o.ServeAddress, "127.0.0.1:10248"},
		"logging.verbosity":      {int(o.Logging.Verbosity), 0},
	}
	for name, c := range checks {
		if diff := cmp.Diff(c[1], c[0]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// The authentication fields say what nodeagent does: read, noted.
	if len(notes) != 3 {
		t.Errorf("notes %q, want the anonymous, webhook and mode settings'", notes)
	}
}

// A field nodeagent does not implement is refused by name, with the
// reason, as is a field unknown to the KubeletConfiguration.
func TestKubeletConfigRefusals(t *testing.T) {
	const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /m\n"
	for _, tc := range []struct{ body, want string }{
		{"cpuManagerPolicy: static\n", `cpuManagerPolicy is set ("static") but nodeagent does not implement it: nodeagent has no CPU manager`},
		{"readOnlyPort: 10255\n", `readOnlyPort is set (10255) but nodeagent does not implement it: nodeagent serves no unauthenticated read-only port`},
		{"authorization:\n  mode: AlwaysAllow\n", `authorization.mode is set ("AlwaysAllow") but nodeagent does not implement it: the node API always asks the apiserver`},
		{"providerID: aws:///x\n", `providerID is set ("aws:///x") but nodeagent does not implement it: nodeagent has no such setting`},
		{"staticPodPth: /m\n", `unknown field "staticPodPth"`},
		{"maxPods: many\n", "maxPods"},
	} {
		_, err := parseArgs(t, "--config", writeConfig(t, head+tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
}
