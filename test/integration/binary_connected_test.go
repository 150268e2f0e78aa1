package integration

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// Connected mode, part 1: the agent as a Node of the real cluster, with
// the node's own identity (system:node:<name>), under the Node authorizer
// and NodeRestriction.

// writeKubeconfig writes cfg as a kubeconfig file in dir.
func writeKubeconfig(t testing.TB, cfg *rest.Config, dir string) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile,
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	c.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	c.CurrentContext = "c"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newConnectedAgent starts an agent as env's node, with its token, and
// removes the Node and Lease it made when the test ends.
func newConnectedAgent(t testing.TB, extraArgs ...string) *agentHarness {
	t.Helper()
	return newAgentNamed(t, env.NodeName, connectedArgs(t, extraArgs...)...)
}

// connectedArgs are the flags of an agent that is env's node, with its
// token, followed by extraArgs; the Node and Lease an earlier test left
// are removed now, and the agent's when the test ends.
func connectedArgs(t testing.TB, extraArgs ...string) []string {
	t.Helper()
	kubeconfig := writeKubeconfig(t, env.NodeConfig, t.TempDir())
	t.Cleanup(func() { deleteNodeTB(t, env.NodeName) })
	deleteNodeTB(t, env.NodeName)
	return append([]string{"--kubeconfig", kubeconfig,
		"--node-status-update-frequency", "2s", "--node-lease-duration-seconds", "8"}, extraArgs...)
}

func deleteNode(t *testing.T, name string) { deleteNodeTB(t, name) }

func deleteNodeTB(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	if err := env.AdminClient.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Node %s: %v", name, err)
	}
	if err := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Lease %s: %v", name, err)
	}
}

// waitNode polls env's Node (as the admin) until ok, or fails after timeout.
func waitNode(t testing.TB, what string, timeout time.Duration, ok func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	return waitNamedNode(t, env.NodeName, what, timeout, ok)
}

func waitNamedNode(t testing.TB, name, what string, timeout time.Duration, ok func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	var last *corev1.Node
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := env.AdminClient.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = n
		return ok(n), nil
	})
	if err != nil {
		t.Fatalf("waiting for the Node: %s: %v\nlast seen: %s", what, err, describeNode(last))
	}
	return last
}

func describeNode(n *corev1.Node) string {
	if n == nil {
		return "no Node"
	}
	s := fmt.Sprintf("%s uid %s labels %v taints %v\n", n.Name, n.UID, n.Labels, n.Spec.Taints)
	for _, c := range n.Status.Conditions {
		s += fmt.Sprintf("  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}

// waitNodeTB returns the Node as it is now.
func waitNodeTB(t testing.TB) *corev1.Node {
	t.Helper()
	n, err := env.AdminClient.CoreV1().Nodes().Get(context.Background(), env.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func isReady(n *corev1.Node) bool {
	return nodeCondition(n, corev1.NodeReady).Status == corev1.ConditionTrue
}

func TestBinaryConnectedNodeRegisters(t *testing.T) {
	h := newConnectedAgent(t, "--node-labels", "example.com/pool=edge", "--register-with-taints", "dedicated=edge:NoSchedule",
		"--system-reserved", "memory=512Mi,cpu=100m")
	n := waitNode(t, "Ready", 30*time.Second, isReady)

	for k, v := range map[string]string{corev1.LabelHostname: env.NodeName, corev1.LabelOSStable: "linux", "example.com/pool": "edge"} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	taints := map[string]bool{}
	for _, tn := range n.Spec.Taints {
		taints[tn.Key+"="+tn.Value+":"+string(tn.Effect)] = true
	}
	if !taints["dedicated=edge:NoSchedule"] || taints["node.nodeagent.io/api-pods=unsupported:NoSchedule"] {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	// Capacity is the machine's; allocatable is less what is reserved and
	// the memory eviction threshold.
	memCap, memAlloc := n.Status.Capacity[corev1.ResourceMemory], n.Status.Allocatable[corev1.ResourceMemory]
	if got, want := memCap.Value()-memAlloc.Value(), int64(512<<20+100<<20); got < want {
		t.Errorf("capacity - allocatable memory = %d, want at least %d (reserved + threshold)", got, want)
	}
	if cpu := n.Status.Capacity[corev1.ResourceCPU]; cpu.Value() < 1 {
		t.Errorf("cpu capacity %s", cpu.String())
	}
	for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := nodeCondition(n, typ); c.Status != corev1.ConditionFalse || c.Reason == "" {
			t.Errorf("%s: %+v", typ, c)
		}
	}
	info := n.Status.NodeInfo
	if info.ContainerRuntimeVersion == "" || info.BootID == "" || info.KernelVersion == "" || info.KubeletVersion == "" {
		t.Errorf("nodeInfo %+v", info)
	}

	// The Lease is the node's, owned by its Node, and renewed.
	var renewed *metav1.MicroTime
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, env.NodeName, metav1.GetOptions{})
		if err != nil || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != n.UID || l.Spec.RenewTime == nil {
			return false, nil
		}
		if renewed == nil {
			renewed = l.Spec.RenewTime
			return false, nil
		}
		return l.Spec.RenewTime.After(renewed.Time), nil
	})
	if err != nil {
		t.Fatalf("the Lease was not created, owned by the Node and renewed: %v", err)
	}

	// A Node deleted by a user is registered again.
	if err := env.AdminClient.CoreV1().Nodes().Delete(context.Background(), env.NodeName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := waitNode(t, "registered again", 15*time.Second, func(m *corev1.Node) bool { return m.UID != n.UID && isReady(m) })
	t.Logf("registered again as %s", again.UID)
	h.stop()
}

// TestBinaryConnectedBootstrapAndRotation joins from a bootstrap token as
// kubeadm issues it: the agent asks for its certificate, the
// controller-manager's approver and signer grant it, and the Node is
// Ready under that identity. The signer issues short-lived certificates
// here, so the agent renews its certificate while it runs; its Lease and
// its watch go on through the new one.
func TestBinaryConnectedBootstrapAndRotation(t *testing.T) {
	// The signer backdates a certificate by 5 minutes: with 3 minutes of
	// signing duration a certificate lives 8, and is renewed 36 to 132 s
	// after it was issued.
	env.RestartControllerManager(t, 3*time.Minute)
	tok := env.NewBootstrapToken(t, time.Hour)
	bootstrap := env.WriteBootstrapKubeconfig(t, tok)
	dir := t.TempDir()
	kubeconfig, certDir := filepath.Join(dir, "node.kubeconfig"), filepath.Join(dir, "pki")
	name := "boot" + randomSuffix()
	t.Cleanup(func() { deleteNodeTB(t, name) })

	h := newAgentNamed(t, name, "--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", bootstrap, "--cert-dir", certDir,
		"--node-status-update-frequency", "2s", "--node-lease-duration-seconds", "8")
	n := waitNamedNode(t, name, "Ready from a bootstrap token", time.Minute, isReady)
	for path, mode := range map[string]os.FileMode{kubeconfig: 0o600, filepath.Join(certDir, "kubelet-client-current.pem"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), mode)
		}
	}
	first := clientCertificate(t, certDir)
	if first.Subject.CommonName != "system:node:"+name {
		t.Fatalf("certificate for %q", first.Subject.CommonName)
	}
	t.Logf("first certificate %s, valid until %v", first.SerialNumber, first.NotAfter)

	// Renewed before it expires, without a restart.
	var renewed *x509.Certificate
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
		c := clientCertificate(t, certDir)
		if c.SerialNumber.Cmp(first.SerialNumber) != 0 {
			renewed = c
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the certificate was not renewed: %v\n%s", err, h.log(40))
	}
	if !renewed.NotAfter.After(first.NotAfter) || time.Now().After(first.NotAfter) {
		t.Errorf("renewed at %v: new one valid until %v, the first until %v", time.Now(), renewed.NotAfter, first.NotAfter)
	}
	if h.exit != nil || !h.running() {
		t.Fatalf("the agent stopped while renewing")
	}
	// The Lease is renewed, and the watch of the Node still answers: a
	// Node deleted now is registered again at once, with the new
	// certificate (the old connections were closed at the renewal).
	renewedAt := time.Now()
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(renewedAt), nil
	})
	if err != nil {
		t.Fatalf("the Lease was not renewed after the certificate: %v", err)
	}
	if err := env.AdminClient.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamedNode(t, name, "registered again after the renewal", 15*time.Second, func(m *corev1.Node) bool { return m.UID != n.UID && isReady(m) })
	h.stop()
}

// clientCertificate reads the agent's current client certificate.
func clientCertificate(t *testing.T, certDir string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(certDir, "kubelet-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			t.Fatal("no certificate in kubelet-client-current.pem")
		}
		if block.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
}

func randomSuffix() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestBinaryConnectedNotReadyWhileStopped: the node lifecycle controller
// marks the Node Ready=Unknown once the stopped agent's Lease runs out,
// and the agent, started again, makes it Ready at once.
func TestBinaryConnectedNotReadyWhileStopped(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	h.stop()
	stopped := time.Now()
	waitNode(t, "Ready=Unknown after the Lease ran out", env.NodeMonitorGracePeriod+30*time.Second, func(n *corev1.Node) bool {
		return nodeCondition(n, corev1.NodeReady).Status == corev1.ConditionUnknown
	})
	t.Logf("Ready=Unknown %v after the agent stopped", time.Since(stopped))
	h.start()
	restarted := time.Now()
	waitNode(t, "Ready again", 10*time.Second, isReady)
	t.Logf("Ready again %v after the agent started", time.Since(restarted))
	h.stop()
}

// TestBinaryConnectedSurvivesAPIServerOutage: with the apiserver gone for
// 60 s, the pods run on untouched and the agent does not spin; once it is
// back, the Lease and the Node status are current within 10 s.
// The apiserver stopped for 60 s while static pods start, stop and
// change: the pods are untouched by the outage, and within 10 s of its
// return the Node, the Lease and every mirror pod are current again.
func TestBinaryConnectedSurvivesAPIServerOutage(t *testing.T) {
	h := newConnectedAgent(t)
	loop := func(name string) *corev1.Pod {
		return testPod(name, shContainer("main", "while true; do sleep 1; done"))
	}
	for _, name := range []string{"outage", "leaving", "changing"} {
		h.writeManifest(loop(name))
	}
	for _, name := range []string{"outage", "leaving", "changing"} {
		p := h.waitPod(name, "running", 30*time.Second, runningContainer("main"))
		h.waitMirror(name, "Running", 10*time.Second, mirrorRunning(p.ConfigHash))
	}
	waitNode(t, "Ready", 30*time.Second, isReady)
	before := h.runningIDs("outage")
	cpu0 := cpuTicks(t, h.proc.Process.Pid)

	old := h.localPod("changing").ConfigHash
	env.StopAPIServer(t)
	down := time.Now()
	// Pods start, stop and change while the apiserver is away.
	h.writeManifest(loop("arriving"))
	h.removeManifest("leaving")
	changed := loop("changing")
	changed.Spec.Containers[0].Env = []corev1.EnvVar{envVar("VERSION", "2")}
	h.writeManifest(changed)
	h.waitPod("arriving", "running", 30*time.Second, runningContainer("main"))
	h.waitPod("changing", "its new version running", 30*time.Second, func(p localapi.Pod) bool {
		return p.ConfigHash != old && runningContainer("main")(p)
	})
	time.Sleep(60*time.Second - time.Since(down))
	if after := h.runningIDs("outage"); !maps.Equal(before, after) {
		t.Errorf("the pod's containers changed while the apiserver was away: %v -> %v", before, after)
	}
	if p := h.waitPod("outage", "running", time.Second, runningContainer("main")); findContainer(p, "main").RestartCount != 0 {
		t.Errorf("the container restarted while the apiserver was away")
	}
	// Reconnecting with backoff costs little: well under a tenth of a core.
	if cpu := float64(cpuTicks(t, h.proc.Process.Pid)-cpu0) / 100 / 60; cpu > 0.05 {
		t.Errorf("the agent used %.1f%% of a core while the apiserver was away", cpu*100)
	}
	env.StartAPIServer(t)
	back := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, env.NodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(back), nil
	})
	if err != nil {
		t.Fatalf("the Lease was not renewed within 10 s of the apiserver's return: %v\n%s", err, h.log(30))
	}
	t.Logf("Lease renewed %v after the apiserver's return", time.Since(back))
	// The controller-manager may have marked the Node Unknown meanwhile:
	// it is Ready again, with a heartbeat from after the return.
	waitNode(t, "Ready and current", 10*time.Second-time.Since(back), func(n *corev1.Node) bool {
		c := nodeCondition(n, corev1.NodeReady)
		return c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(back.Truncate(time.Second))
	})
	t.Logf("Node Ready and current %v after the apiserver's return", time.Since(back))
	for _, name := range []string{"outage", "arriving", "changing"} {
		p := h.localPod(name)
		m := h.waitMirror(name, "current", 10*time.Second-time.Since(back), mirrorRunning(p.ConfigHash))
		if got, want := m.Status.ContainerStatuses[0].ContainerID, findContainer(p, "main").ContainerID; got != want {
			t.Errorf("mirror of %s reports container %s, the agent runs %s", name, got, want)
		}
	}
	h.waitMirror("leaving", "deleted", 10*time.Second-time.Since(back), mirrorGone)
	t.Logf("every mirror current, no orphan left, %v after the apiserver's return", time.Since(back))
	h.stop()
}
