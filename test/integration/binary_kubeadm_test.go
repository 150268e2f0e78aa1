package integration

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A node moved from the kubelet: nodeagent started with a kubeadm node's
// command line and its KubeletConfiguration.

// kubeadmConfig is the KubeletConfiguration kubeadm v1.37 writes to
// /var/lib/kubelet/config.yaml (its defaults, with the zeros it marshals),
// with what this machine needs instead: the cgroupfs driver (kubeadm's
// default is systemd), on cgroup v1 (failCgroupV1: false), the test's
// paths, health and node API ports, and, as every agent of these tests, no image GC
// nor disk eviction on the shared containerd.
const kubeadmConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: %[1]s
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: cgroupfs
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
evictionPressureTransitionPeriod: 0s
failCgroupV1: false
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: %[2]s
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: %[3]s
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
podLogsDir: %[4]s
imageGCHighThresholdPercent: 100
evictionHard:
  memory.available: 100Mi
port: %[5]s
`

// TestBinaryKubeadmNode starts nodeagent as kubeadm's systemd drop-in
// starts the kubelet: the flags of kubeadm-flags.env, then --kubeconfig,
// --bootstrap-kubeconfig and --config; the node bootstraps its
// certificate, joins the cluster Ready, and runs a pod bound to it.
func TestBinaryKubeadmNode(t *testing.T) {
	tok := env.NewBootstrapToken(t, time.Hour)
	bootstrap := env.WriteBootstrapKubeconfig(t, tok)
	name := "kubeadm" + randomSuffix()
	t.Cleanup(func() { deleteNodeTB(t, name) })

	h := newHarness(t, name, "")
	// The kubelet's root dir holds the local API's socket, whose path
	// must be short.
	root, err := os.MkdirTemp("", "kadm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	h.socket = filepath.Join(root, "nodeagent.sock")
	_, healthzPort, _ := net.SplitHostPort(h.addr)
	_, nodeAPIPort, _ := net.SplitHostPort(freeAddress(t))
	config := filepath.Join(h.dir, "config.yaml")
	body := fmt.Sprintf(kubeadmConfig, env.CAFile, healthzPort, h.manifests, filepath.Join(h.dir, "logs"), nodeAPIPort)
	if err := os.WriteFile(config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// KUBELET_KUBEADM_ARGS as kubeadm wrote it before v1.27 (the pause
	// image) and since (the node name when it is not the hostname), then
	// the drop-in's KUBELET_KUBECONFIG_ARGS and KUBELET_CONFIG_ARGS; and
	// the test's root dir, and verbosity.
	h.argv = []string{
		"--container-runtime-endpoint=" + env.CRIEndpoint,
		"--pod-infra-container-image=registry.k8s.io/pause:3.10",
		"--hostname-override=" + name,
		"--bootstrap-kubeconfig=" + bootstrap, "--kubeconfig=" + filepath.Join(h.dir, "kubelet.conf"),
		"--config=" + config,
		"--root-dir=" + root, "--v=2",
	}
	h.start()

	n := waitNamedNode(t, name, "Ready, joined from a kubeadm command line and config", time.Minute, isReady)
	if got := fmt.Sprint(n.Status.DaemonEndpoints.KubeletEndpoint.Port); got != nodeAPIPort {
		t.Errorf("node API port %s, want the config's %s", got, nodeAPIPort)
	}
	pod := h.createAPIPod(h.apiPodSpec("web", busybox("web", "sleep 3600")))
	h.waitAPIPod(pod.Name, "running", time.Minute, apiPodRunning(pod.UID))

	// The harmless kubelet settings are named in the log, once.
	log := h.log(400)
	for _, want := range []string{"--pod-infra-container-image=registry.k8s.io/pause:3.10 is a kubelet flag nodeagent ignores", "failCgroupV1: false is not a setting of nodeagent"} {
		if c := strings.Count(log, want); c != 1 {
			t.Errorf("the log names %q %d times, want once:\n%s", want, c, log)
		}
	}
	h.stop()
}

// TestKubeletHelpIsTheCachedBinarys keeps the kubelet's --help that
// nodeagent's unit tests read (to know every kubelet flag) equal to the
// kubelet binary the tests run against.
func TestKubeletHelpIsTheCachedBinarys(t *testing.T) {
	bins, _ := filepath.Glob(filepath.Join(filepath.Dir(env.KubectlBin), "kubelet-v*"))
	if len(bins) != 1 {
		t.Fatalf("want one cached kubelet binary beside %s, found %v", env.KubectlBin, bins)
	}
	version := strings.TrimPrefix(filepath.Base(bins[0]), "kubelet-")
	want, err := os.ReadFile(filepath.Join(env.RepoRoot, "cmd/nodeagent/app/testdata", "kubelet-"+version+"-help.txt"))
	if err != nil {
		t.Fatalf("no saved --help of kubelet %s: %v (save it: %s --help > cmd/nodeagent/app/testdata/kubelet-%s-help.txt)", version, err, bins[0], version)
	}
	cmd := exec.Command(bins[0], "--help")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // --help exits 0 or 2 by version; the text is what matters
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("%s --help differs from the saved copy; save it again", bins[0])
	}
}
