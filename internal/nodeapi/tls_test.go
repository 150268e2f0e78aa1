package nodeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/node"
)

func TestSelfSignedCertificateIsKept(t *testing.T) {
	dir := t.TempDir()
	o := Options{CertDir: dir, NodeName: "node-1", Hostnames: []string{"host-a"}, IPs: []net.IP{net.ParseIP("192.0.2.7")}, Logger: testr.New(t)}
	first, err := o.servingCertificate()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(first.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("node-1"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("192.0.2.7"); err != nil {
		t.Error(err)
	}
	second, err := o.servingCertificate()
	if err != nil {
		t.Fatal(err)
	}
	if string(second.Certificate[0]) != string(first.Certificate[0]) {
		t.Error("a second start made a new certificate")
	}
	if fi, err := os.Stat(filepath.Join(dir, selfSignedKey)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode(), err)
	}
}

// switchableCert is a certificate source that the test changes, as the
// cluster's issue and renewal change the served certificate.
type switchableCert struct {
	mu   sync.Mutex
	cert *tls.Certificate
}

func (c *switchableCert) set(cert *tls.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cert = cert
}

func (c *switchableCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert == nil {
		return nil, errors.New("no serving certificate yet: CertificateSigningRequest csr-1 awaits approval")
	}
	return c.cert, nil
}

func selfSigned(t *testing.T, host string) *tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// With GetCertificate, each handshake takes the certificate it gives at
// that moment: none refuses the handshake, a new one is served at once.
func TestServingCertificateFromGetCertificate(t *testing.T) {
	var src switchableCert
	srv, err := New(Options{
		Address: "127.0.0.1", GetCertificate: src.get,
		NodeName: "node-1", Client: (&reviewer{}).client(t), Runtime: &fakeRuntime{},
		Pods: func() []*corev1.Pod { return nil }, NodeUsage: func() (node.Usage, error) { return node.Usage{}, nil },
		RootDir: t.TempDir(), Metrics: metrics.NewKubeRegistry(), ProbeMetrics: metrics.NewKubeRegistry(), Config: map[string]string{},
		Logger: testr.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", srv.Port())
	peer := func() (*x509.Certificate, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) // #nosec G402 -- the test compares the certificate itself
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0], nil
	}

	if c, err := peer(); err == nil {
		t.Fatalf("handshake served %v before any certificate", c.Subject)
	} else if !strings.Contains(err.Error(), "internal error") {
		t.Errorf("handshake without a certificate: %v, want the server to abort it", err)
	}
	first, second := selfSigned(t, "first"), selfSigned(t, "second")
	for _, want := range []*tls.Certificate{first, second} {
		src.set(want)
		got, err := peer()
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Raw) != string(want.Certificate[0]) {
			t.Errorf("served %s, want %s", got.Subject.CommonName, want.Leaf.Subject.CommonName)
		}
	}
}

func TestGetCertificateExcludesCertFile(t *testing.T) {
	o := Options{GetCertificate: (&switchableCert{}).get, CertFile: "/c", KeyFile: "/k"}
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "GetCertificate and CertFile") {
		t.Errorf("validate() = %v, want GetCertificate and CertFile refused together", err)
	}
	o = Options{GetCertificate: (&switchableCert{}).get}
	if err := o.validate(); err != nil && strings.Contains(err.Error(), "CertDir") {
		t.Errorf("validate() = %v: with GetCertificate no cert dir is needed", err)
	}
}
