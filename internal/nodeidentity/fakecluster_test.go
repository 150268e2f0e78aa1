package nodeidentity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"
)

// testCA signs the certificates of a test: the control plane's client CA.
type testCA struct {
	key    *ecdsa.PrivateKey
	cert   *x509.Certificate
	pem    []byte
	serial int64
	mu     sync.Mutex
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), serial: 1}
}

// issue signs a client certificate for pub, valid from notBefore for life.
func (ca *testCA) issue(t *testing.T, pub crypto.PublicKey, subject pkix.Name, notBefore time.Time, life time.Duration) []byte {
	t.Helper()
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: notBefore, NotAfter: notBefore.Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Error(err)
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pair makes a key and a certificate for the node, PEM.
func (ca *testCA) pair(t *testing.T, node string, notBefore time.Time, life time.Duration) (certPEM, keyPEM []byte) {
	t.Helper()
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := keyutil.ParsePrivateKeyPEM(keyPEM)
	return ca.issue(t, key.(crypto.Signer).Public(), nodeSubject(node), notBefore, life), keyPEM
}

// fakeControlPlane plays the controller-manager's CSR approver and signer
// on a fake clientset: each CSR created is approved and signed at once
// (with the next of lives, the last repeating), or denied.
type fakeControlPlane struct {
	t      *testing.T
	ca     *testCA
	client *fake.Clientset

	mu      sync.Mutex
	lives   []time.Duration
	deny    bool  // deny every CSR
	ignore  bool  // leave every CSR pending
	refuse  error // fail creates with this
	refuseN int   // only the first refuseN creates, if not 0
	creates int   // create calls seen
	tokens  []string
	created []*certificatesv1.CertificateSigningRequest // as submitted
}

func newFakeControlPlane(t *testing.T, ca *testCA, lives ...time.Duration) *fakeControlPlane {
	cp := &fakeControlPlane{t: t, ca: ca, client: fake.NewClientset(), lives: lives}
	csrs := certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")
	cp.client.PrependReactor("create", "certificatesigningrequests", cp.onCreate)
	// The fake ignores field selectors; client-go's wait for a CSR relies
	// on them (an event for another CSR is an error there).
	cp.client.PrependReactor("list", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		name, _ := a.(clienttesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		obj, err := cp.client.Tracker().List(csrs, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "")
		if err != nil || name == "" {
			return true, obj, err
		}
		list := obj.(*certificatesv1.CertificateSigningRequestList)
		var kept []certificatesv1.CertificateSigningRequest
		for _, c := range list.Items {
			if c.Name == name {
				kept = append(kept, c)
			}
		}
		list.Items = kept
		return true, list, nil
	})
	cp.client.PrependWatchReactor("certificatesigningrequests", func(a clienttesting.Action) (bool, watch.Interface, error) {
		wa := a.(clienttesting.WatchActionImpl)
		name, _ := wa.WatchRestrictions.Fields.RequiresExactMatch("metadata.name")
		w, err := cp.client.Tracker().Watch(csrs, "", wa.ListOptions)
		if err != nil || name == "" {
			return true, w, err
		}
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			c, ok := e.Object.(*certificatesv1.CertificateSigningRequest)
			return e, !ok || c.Name == name
		}), nil
	})
	return cp
}

func (cp *fakeControlPlane) onCreate(a clienttesting.Action) (bool, runtime.Object, error) {
	c := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.creates++
	if cp.refuse != nil && (cp.refuseN == 0 || cp.creates <= cp.refuseN) {
		return true, nil, cp.refuse
	}
	if c.Name == "" { // the fake does not implement generateName
		c.Name = fmt.Sprintf("%s%d", c.GenerateName, len(cp.created))
	}
	if _, err := cp.client.Tracker().Get(a.GetResource(), "", c.Name); err == nil {
		return false, nil, nil // the tracker answers AlreadyExists
	}
	c.UID = types.UID(fmt.Sprintf("uid-%s", c.Name))
	cp.created = append(cp.created, c.DeepCopy())
	if cp.deny {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue,
			Reason: "NotAllowed", Message: "test policy denies it",
		})
		return false, nil, nil
	}
	if cp.ignore {
		return false, nil, nil
	}
	block, _ := pem.Decode(c.Spec.Request)
	if block == nil {
		cp.t.Error("CSR without a PEM request")
		return false, nil, nil
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		cp.t.Error(err)
		return false, nil, nil
	}
	life := cp.lives[min(len(cp.created), len(cp.lives))-1]
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved",
	})
	c.Status.Certificate = cp.ca.issue(cp.t, req.PublicKey, req.Subject, time.Now().Add(-time.Second), life)
	return false, nil, nil
}

func (cp *fakeControlPlane) setRefusal(err error, n int) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.refuse, cp.refuseN, cp.creates = err, n, 0
}

func (cp *fakeControlPlane) submitted() []*certificatesv1.CertificateSigningRequest {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]*certificatesv1.CertificateSigningRequest(nil), cp.created...)
}

// newClient hands out the fake, noting the credentials it was asked for.
func (cp *fakeControlPlane) newClient(c *rest.Config) (kubernetes.Interface, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.tokens = append(cp.tokens, c.BearerToken)
	return cp.client, nil
}

// lastToken is the bearer token of the latest client made ("" for the
// node's certificate).
func (cp *fakeControlPlane) lastToken() string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.tokens[len(cp.tokens)-1]
}

func (cp *fakeControlPlane) csrCount(t *testing.T) int {
	t.Helper()
	l, err := cp.client.Tracker().List(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
		certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "")
	if err != nil {
		t.Fatal(err)
	}
	return len(l.(*certificatesv1.CertificateSigningRequestList).Items)
}

// peerServer is a TLS server that asks for a client certificate signed by
// the test CA and records, for each request, which one was presented and
// on which connection.
type peerServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	serial string
	cn     string
	conn   string
	proto  int // HTTP major version
}

func newPeerServer(t *testing.T, ca *testCA) *peerServer {
	t.Helper()
	ps := &peerServer{}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	mux := http.NewServeMux()
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		c := r.TLS.PeerCertificates[0]
		if time.Now().After(c.NotAfter) {
			http.Error(w, "client certificate expired", http.StatusUnauthorized)
			return
		}
		ps.mu.Lock()
		ps.seen = append(ps.seen, seenRequest{serial: c.SerialNumber.String(), cn: c.Subject.CommonName, conn: r.RemoteAddr, proto: r.ProtoMajor})
		ps.mu.Unlock()
		fmt.Fprint(w, c.SerialNumber.String())
	})
	// /stream stands for a watch: it answers, then holds the connection
	// until the client or the server goes away.
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ps.Server = httptest.NewUnstartedServer(mux)
	ps.EnableHTTP2 = true // as the apiserver: every request on one connection
	ps.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	ps.StartTLS()
	t.Cleanup(func() {
		ps.CloseClientConnections()
		ps.Close()
	})
	return ps
}

func (ps *peerServer) requests() []seenRequest {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]seenRequest(nil), ps.seen...)
}

// serverCAPEM is the PEM of the server's certificate, for kubeconfigs.
func (ps *peerServer) serverCAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ps.Certificate().Raw})
}

// writeKubeconfig writes a kubeconfig for server with the given auth.
func writeKubeconfig(t *testing.T, path, server string, caPEM []byte, auth *clientcmdapi.AuthInfo) {
	t.Helper()
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: server, CertificateAuthorityData: caPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": auth},
		Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}},
		CurrentContext: "x",
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		t.Fatal(err)
	}
}

// env is one test's node: paths in a temporary dir, a control plane, a
// server to present certificates to.
type env struct {
	dir, kubeconfig, bootstrap, certDir string
	ca                                  *testCA
	cp                                  *fakeControlPlane
	server                              *peerServer
}

func newEnv(t *testing.T, lives ...time.Duration) *env {
	t.Helper()
	if len(lives) == 0 {
		lives = []time.Duration{time.Hour}
	}
	dir := settlingTempDir(t)
	e := &env{
		dir:        dir,
		kubeconfig: filepath.Join(dir, "etc", "kubelet.conf"),
		bootstrap:  filepath.Join(dir, "etc", "bootstrap-kubelet.conf"),
		certDir:    filepath.Join(dir, "pki"),
		ca:         newTestCA(t),
	}
	e.cp = newFakeControlPlane(t, e.ca, lives...)
	e.server = newPeerServer(t, e.ca)
	writeKubeconfig(t, e.bootstrap, e.server.URL, e.server.serverCAPEM(), &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"})
	return e
}

func (e *env) options() Options {
	return Options{
		NodeName: "node-1", Kubeconfig: e.kubeconfig, BootstrapKubeconfig: e.bootstrap, CertDir: e.certDir,
		BootstrapTimeout: 20 * time.Second, newClient: e.cp.newClient,
	}
}

// whoami asks the server which certificate the client presented.
func whoami(t *testing.T, c *http.Client, url string) (serial string, err error) {
	t.Helper()
	resp, err := c.Get(url + "/whoami")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b [64]byte
	n, _ := resp.Body.Read(b[:])
	if resp.StatusCode != http.StatusOK {
		return "", &statusError{code: resp.StatusCode, body: string(b[:n])}
	}
	return string(b[:n]), nil
}

// statusError is the server's refusal of a request, as opposed to a
// failed connection.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %s", e.code, e.body) }

func mustKey(t *testing.T) crypto.PublicKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

func tlsCert(c *x509.Certificate) *tls.Certificate {
	return &tls.Certificate{Certificate: [][]byte{c.Raw}, Leaf: c}
}

func certOf(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var certificatesResource = certificatesv1.Resource("certificatesigningrequests")

// testLogger logs to t until the test ends, and drops what comes after:
// client-go's certificate manager may still log (a request its Stop
// cancelled) once Run has returned, and t.Log then panics.
func testLogger(t *testing.T) logr.Logger {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
	})
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Log(prefix, args)
		}
	}, funcr.Options{Verbosity: 2})
}

// settlingTempDir is a temporary directory removed once nothing writes
// into it any more: client-go's certificate manager stops its rotation
// goroutine without waiting for it, so a renewal under way when a test
// ends may still store its pair for a moment.
func settlingTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nodeidentity-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("removing %s: %v", dir, err)
	})
	return dir
}
