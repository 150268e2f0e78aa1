package integration

import (
	"context"
	"fmt"
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
func newConnectedAgent(t *testing.T, extraArgs ...string) *agentHarness {
	t.Helper()
	kubeconfig := writeKubeconfig(t, env.NodeConfig, t.TempDir())
	t.Cleanup(func() { deleteNode(t, env.NodeName) })
	deleteNode(t, env.NodeName) // an earlier test's
	args := append([]string{"--kubeconfig", kubeconfig,
		"--node-status-update-frequency", "2s", "--node-lease-duration-seconds", "8"}, extraArgs...)
	return newAgentNamed(t, env.NodeName, args...)
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

// waitNode polls the Node (as the admin) until ok, or fails after timeout.
func waitNode(t *testing.T, what string, timeout time.Duration, ok func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	var last *corev1.Node
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := env.AdminClient.CoreV1().Nodes().Get(ctx, env.NodeName, metav1.GetOptions{})
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
	if !taints["dedicated=edge:NoSchedule"] || !taints["node.nodeagent.io/api-pods=unsupported:NoSchedule"] {
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
