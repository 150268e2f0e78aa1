package nodeidentity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func newIdentity(t *testing.T, opts Options) *Identity {
	t.Helper()
	opts.Logger = testLogger(t)
	id, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if id.dialer != nil {
			id.dialer.CloseAll()
		}
	})
	return id
}

func httpClient(t *testing.T, id *Identity) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(id.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestBootstrapFromNothing(t *testing.T) {
	e := newEnv(t)
	id := newIdentity(t, e.options())

	csrs := e.cp.submitted()
	if len(csrs) != 1 {
		t.Fatalf("CSRs submitted: %d, want 1", len(csrs))
	}
	c := csrs[0]
	if c.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("signer %q", c.Spec.SignerName)
	}
	wantUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	if len(c.Spec.Usages) != 2 || c.Spec.Usages[0] != wantUsages[0] || c.Spec.Usages[1] != wantUsages[1] {
		t.Errorf("usages %v, want %v", c.Spec.Usages, wantUsages)
	}
	req := parseCSR(t, c.Spec.Request)
	if req.Subject.CommonName != "system:node:node-1" || len(req.Subject.Organization) != 1 || req.Subject.Organization[0] != "system:nodes" {
		t.Errorf("subject %v", req.Subject)
	}
	if req.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", req.PublicKeyAlgorithm)
	}

	current := filepath.Join(e.certDir, "kubelet-client-current.pem")
	for _, p := range []string{e.kubeconfig, current} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, m)
		}
	}
	if _, err := os.Stat(filepath.Join(e.certDir, pendingKeyFile)); !os.IsNotExist(err) {
		t.Errorf("pending key still there: %v", err)
	}
	kc, err := loadKubeconfig(e.kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig written: %v", err)
	}
	if kc.rest.Host != e.server.URL {
		t.Errorf("kubeconfig server %q, want the bootstrap's %q", kc.rest.Host, e.server.URL)
	}

	// The config makes clientsets (no TLS option conflicts with its
	// transport), and works: the server sees the node's certificate.
	if _, err := kubernetes.NewForConfig(id.RESTConfig()); err != nil {
		t.Errorf("clientset: %v", err)
	}
	serial, err := whoami(t, httpClient(t, id), e.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	seen := e.server.requests()
	if seen[0].cn != "system:node:node-1" {
		t.Errorf("server saw %q", seen[0].cn)
	}
	// And a start from the written kubeconfig alone presents the same one.
	opts := e.options()
	opts.BootstrapKubeconfig = ""
	opts.DisableRotation = true
	again, err := whoami(t, httpClient(t, newIdentity(t, opts)), e.server.URL)
	if err != nil || again != serial {
		t.Errorf("restart presents %q (%v), want %q", again, err, serial)
	}
}

func parseCSR(t *testing.T, pemData []byte) *x509.CertificateRequest {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("no PEM request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// storeNodeCertificate lays down what an earlier bootstrap leaves: a pair
// in the cert dir and a kubeconfig pointing at it.
func storeNodeCertificate(t *testing.T, e *env, notBefore time.Time, life time.Duration) []byte {
	t.Helper()
	certPEM, keyPEM := e.ca.pair(t, "node-1", notBefore, life)
	store, err := certificate.NewFileStore(storePrefix, e.certDir, e.certDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	writeKubeconfig(t, e.kubeconfig, e.server.URL, e.server.serverCAPEM(), &clientcmdapi.AuthInfo{
		ClientCertificate: store.CurrentPath(), ClientKey: store.CurrentPath(),
	})
	return certPEM
}

func TestValidCertificateIsReused(t *testing.T) {
	e := newEnv(t)
	certPEM := storeNodeCertificate(t, e, time.Now().Add(-time.Minute), time.Hour)
	id := newIdentity(t, e.options())

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- id.Run(ctx) }()
	serial, err := whoami(t, httpClient(t, id), e.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	if want := certOf(t, certPEM).SerialNumber.String(); serial != want {
		t.Errorf("presented serial %s, want the stored %s", serial, want)
	}
	// The manager, running, sees no reason to renew a fresh certificate.
	time.Sleep(500 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if n := len(e.cp.submitted()); n != 0 {
		t.Errorf("CSRs submitted: %d, want 0", n)
	}
}

func TestExpiredCertificateBootstrapsAgain(t *testing.T) {
	e := newEnv(t)
	old := storeNodeCertificate(t, e, time.Now().Add(-2*time.Hour), time.Hour)
	id := newIdentity(t, e.options())
	if n := len(e.cp.submitted()); n != 1 {
		t.Fatalf("CSRs submitted: %d, want 1", n)
	}
	serial, err := whoami(t, httpClient(t, id), e.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	if serial == certOf(t, old).SerialNumber.String() {
		t.Error("still presents the expired certificate")
	}
}

func TestDeniedCSRIsAClearError(t *testing.T) {
	e := newEnv(t)
	e.cp.deny = true
	opts := e.options()
	opts.Logger = testLogger(t)
	_, err := New(t.Context(), opts)
	if err == nil {
		t.Fatal("New succeeded with a denied CSR")
	}
	name := e.cp.submitted()[0].Name
	for _, want := range []string{"CSR " + name, "denied", `"NotAllowed"`, "test policy denies it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, serr := os.Stat(e.kubeconfig); !os.IsNotExist(serr) {
		t.Errorf("kubeconfig written after a denial: %v", serr)
	}
	// A denied CSR is final: the next attempt asks with a new key.
	if _, serr := os.Stat(filepath.Join(e.certDir, pendingKeyFile)); !os.IsNotExist(serr) {
		t.Errorf("key of the denied CSR kept: %v", serr)
	}
}

// An agent that crashed after submitting its CSR restarts with the key it
// left; the CSR, signed meanwhile, is found by name, not submitted again.
func TestInterruptedBootstrapReusesKeyAndCSR(t *testing.T) {
	e := newEnv(t)
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.certDir, pendingKeyFile), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := keyutil.ParsePrivateKeyPEM(keyPEM)
	pub := key.(crypto.Signer).Public()
	name, err := csrName(pub, nodeSubject("node-1"))
	if err != nil {
		t.Fatal(err)
	}
	// What the crashed run submitted, since approved and signed.
	subject := nodeSubject("node-1")
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	signed := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "earlier"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Usages: clientUsages,
		},
		Status: certificatesv1.CertificateSigningRequestStatus{
			Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True"}},
			Certificate: e.ca.issue(t, pub, nodeSubject("node-1"), time.Now().Add(-time.Minute), time.Hour),
		},
	}
	if err := e.cp.client.Tracker().Add(signed); err != nil {
		t.Fatal(err)
	}

	id := newIdentity(t, e.options())
	if n := len(e.cp.submitted()); n != 0 {
		t.Errorf("new CSRs: %d, want 0", n)
	}
	if n := e.cp.csrCount(t); n != 1 {
		t.Errorf("CSRs in the cluster: %d, want 1", n)
	}
	if _, err := whoami(t, httpClient(t, id), e.server.URL); err != nil {
		t.Fatal(err)
	}
	if got := e.server.requests()[0].serial; got != certOf(t, signed.Status.Certificate).SerialNumber.String() {
		t.Errorf("presented serial %s, want the earlier CSR's", got)
	}
}

// A key left with no CSR submitted yet is the key of the CSR submitted.
func TestPendingKeyIsReused(t *testing.T) {
	e := newEnv(t)
	keyPEM, _ := keyutil.MakeEllipticPrivateKeyPEM()
	if err := os.MkdirAll(e.certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.certDir, pendingKeyFile), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := keyutil.ParsePrivateKeyPEM(keyPEM)
	newIdentity(t, e.options())
	csrs := e.cp.submitted()
	if len(csrs) != 1 {
		t.Fatalf("CSRs submitted: %d, want 1", len(csrs))
	}
	req := parseCSR(t, csrs[0].Spec.Request)
	if !key.(*ecdsa.PrivateKey).PublicKey.Equal(req.PublicKey) {
		t.Error("the CSR's key is not the pending key")
	}
}

func TestTokenKubeconfigIsUsedAsIs(t *testing.T) {
	e := newEnv(t)
	writeKubeconfig(t, e.kubeconfig, e.server.URL, e.server.serverCAPEM(), &clientcmdapi.AuthInfo{Token: "node-token"})
	id := newIdentity(t, e.options())
	if got := id.RESTConfig().BearerToken; got != "node-token" {
		t.Errorf("token %q", got)
	}
	if len(e.cp.submitted()) != 0 {
		t.Error("CSR submitted with a token kubeconfig")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := id.Run(ctx); err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestExpiryMetric(t *testing.T) {
	e := newEnv(t)
	reg := metrics.NewKubeRegistry()
	opts := e.options()
	opts.Registry = reg
	id := newIdentity(t, opts)
	want := fmt.Sprintf(`# HELP nodeagent_node_identity_certificate_expiration_timestamp_seconds [ALPHA] When the node's client certificate expires, in seconds since the epoch; 0 without a valid certificate.
# TYPE nodeagent_node_identity_certificate_expiration_timestamp_seconds gauge
nodeagent_node_identity_certificate_expiration_timestamp_seconds %d
`, id.current().Leaf.NotAfter.Unix())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nodeagent_node_identity_certificate_expiration_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	// The kubelet's: whole seconds left, a little less than when read.
	left := time.Until(id.current().Leaf.NotAfter).Seconds()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "kubelet_certificate_manager_client_ttl_seconds" {
			if ttl := mf.GetMetric()[0].GetGauge().GetValue(); ttl > left || ttl < left-60 || ttl != math.Trunc(ttl) {
				t.Errorf("kubelet_certificate_manager_client_ttl_seconds = %v, want the whole seconds of %v left", ttl, left)
			}
			return
		}
	}
	t.Error("no kubelet_certificate_manager_client_ttl_seconds")
}
