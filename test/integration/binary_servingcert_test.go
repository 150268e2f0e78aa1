package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	certutil "k8s.io/client-go/util/cert"
)

// Connected mode, the node API's serving certificate from the cluster
// (--rotate-server-certificates): the agent asks for it with its own
// identity (signer kubernetes.io/kubelet-serving), which nobody in this
// cluster approves but the test, as an operator; the controller-manager
// signs it with the cluster CA; the node API serves it, and its renewal,
// without a restart.

// TestBinaryServingCertificate runs with the signer issuing short-lived
// certificates: 3 minutes of signing duration, backdated by 5, live 8 and
// are renewed 36 to 132 s after they were issued.
func TestBinaryServingCertificate(t *testing.T) {
	env.RestartControllerManager(t, 3*time.Minute)
	addr := freeAddress(t)
	_, port, _ := net.SplitHostPort(addr)
	certDir := t.TempDir()
	csrs := env.AdminClient.CertificatesV1().CertificateSigningRequests()
	before := servingCSRNames(t)
	t.Cleanup(func() {
		for name := range servingCSRNames(t).Difference(before) {
			if err := csrs.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting CSR %s: %v", name, err)
			}
		}
	})

	h := newConnectedAgent(t, "--node-ip=127.0.0.1", "--address=127.0.0.1", "--port="+port,
		"--client-ca-file="+env.CAFile, "--cert-dir="+certDir, "--rotate-server-certificates")
	first := waitServingCSR(t, h, before, 60*time.Second)
	t.Logf("CSR %s, requested by %s", first.Name, first.Spec.Username)
	if first.Spec.Username != "system:node:"+env.NodeName {
		t.Errorf("CSR requested by %q, want the node itself", first.Spec.Username)
	}

	// Nobody approved it: the node API refuses handshakes, saying why in
	// the agent's log, and the agent said once what it waits for.
	if c, err := dialNodeAPI(addr); err == nil {
		t.Errorf("node API served %v before its CSR was approved", c.Subject)
	}
	eventuallyTrue(t, "the agent logging the pending CSR and the refused handshake", 10*time.Second, func() (bool, string) {
		log := h.log(200)
		return strings.Count(log, "the CSR awaits approval") == 1 && strings.Contains(log, `csr="`+first.Name+`"`) &&
			strings.Contains(log, "TLS handshake error") && strings.Contains(log, "CertificateSigningRequest "+first.Name+" (signer kubernetes.io/kubelet-serving) awaits approval"), log
	})

	approveCSR(t, first)
	served := waitServed(t, addr, nil, 30*time.Second)
	n, err := env.AdminClient.CoreV1().Nodes().Get(context.Background(), env.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkServingCertificate(t, served, n)
	stored := readServingPair(t, certDir)
	if stored.SerialNumber.Cmp(served.SerialNumber) != 0 {
		t.Errorf("kubelet-server-current.pem holds %s, the node API serves %s", stored.SerialNumber, served.SerialNumber)
	}
	t.Logf("serving %s, valid until %v", served.SerialNumber, served.NotAfter)

	// Renewal: a new CSR before the certificate ends, approved, and
	// served by the same process.
	second := waitServingCSR(t, h, before.Union(sets.New(first.Name)), 4*time.Minute)
	approveCSR(t, second)
	renewed := waitServed(t, addr, served, 30*time.Second)
	checkServingCertificate(t, renewed, n)
	if !renewed.NotAfter.After(served.NotAfter) || time.Now().After(served.NotAfter) {
		t.Errorf("renewed at %v: new one valid until %v, the first until %v", time.Now(), renewed.NotAfter, served.NotAfter)
	}
	if h.exit != nil || !h.running() {
		t.Fatal("the agent stopped while renewing its serving certificate")
	}
	h.stop()
}

// servingCSRNames are the kubelet-serving CSRs of env's node.
func servingCSRNames(t *testing.T) sets.Set[string] {
	t.Helper()
	l, err := env.AdminClient.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := sets.New[string]()
	for _, c := range l.Items {
		if c.Spec.SignerName == certificatesv1.KubeletServingSignerName && c.Spec.Username == "system:node:"+env.NodeName {
			out.Insert(c.Name)
		}
	}
	return out
}

// waitServingCSR waits for a kubelet-serving CSR of env's node not in
// seen.
func waitServingCSR(t *testing.T, h *agentHarness, seen sets.Set[string], timeout time.Duration) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var found *certificatesv1.CertificateSigningRequest
	eventuallyTrue(t, "a kubelet-serving CSR of the node", timeout, func() (bool, string) {
		for name := range servingCSRNames(t).Difference(seen) {
			c, err := env.AdminClient.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
			if err == nil {
				found = c
				return true, ""
			}
		}
		return false, h.log(30)
	})
	return found
}

// approveCSR approves c as an operator would (kubectl certificate approve).
func approveCSR(t *testing.T, c *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	c = c.DeepCopy()
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "ApprovedByTest", Message: "the test approves the node's serving certificate", LastUpdateTime: metav1.Now(),
	})
	if _, err := env.AdminClient.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), c.Name, c, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("approving CSR %s: %v", c.Name, err)
	}
}

// dialNodeAPI makes a TLS connection to the node API at addr, verifying
// its certificate against the cluster CA for the address dialled, and
// returns the certificate it presented.
func dialNodeAPI(addr string) (*x509.Certificate, error) {
	caPEM, err := os.ReadFile(env.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", env.CAFile)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// waitServed waits until the node API presents a certificate, chained to
// the cluster CA, other than old.
func waitServed(t *testing.T, addr string, old *x509.Certificate, timeout time.Duration) *x509.Certificate {
	t.Helper()
	var got *x509.Certificate
	eventuallyTrue(t, "the node API serving the issued certificate", timeout, func() (bool, string) {
		c, err := dialNodeAPI(addr)
		if err != nil {
			return false, err.Error()
		}
		got = c
		return old == nil || c.SerialNumber.Cmp(old.SerialNumber) != 0, "still " + c.SerialNumber.String()
	})
	return got
}

// checkServingCertificate checks c is the node's serving certificate, for
// every address the Node reports.
func checkServingCertificate(t *testing.T, c *x509.Certificate, n *corev1.Node) {
	t.Helper()
	if c.Subject.CommonName != "system:node:"+env.NodeName || len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != "system:nodes" {
		t.Errorf("subject %v", c.Subject)
	}
	if len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("extended key usages %v, want server auth only", c.ExtKeyUsage)
	}
	if len(n.Status.Addresses) == 0 {
		t.Fatal("the Node reports no address")
	}
	for _, a := range n.Status.Addresses {
		if err := c.VerifyHostname(a.Address); err != nil {
			t.Errorf("Node address %s %s: %v", a.Type, a.Address, err)
		}
	}
}

// readServingPair reads the serving certificate the agent stored.
func readServingPair(t *testing.T, certDir string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(certDir, "kubelet-server-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		t.Fatalf("kubelet-server-current.pem: %v", err)
	}
	return certs[0]
}
