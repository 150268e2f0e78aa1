package nodeidentity

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

var nodeAddresses = []corev1.NodeAddress{
	{Type: corev1.NodeInternalIP, Address: "192.0.2.7"},
	{Type: corev1.NodeHostName, Address: "host-a"},
}

// tokenIdentity is a node identity from a token kubeconfig, as the
// integration tests' node has.
func tokenIdentity(t *testing.T, e *env) *Identity {
	t.Helper()
	writeKubeconfig(t, e.kubeconfig, e.server.URL, e.server.serverCAPEM(), &clientcmdapi.AuthInfo{Token: "node-token"})
	return newIdentity(t, e.options())
}

// runServing runs s until the test ends.
func runServing(t *testing.T, s *Serving) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// eventually polls cond every 20 ms until it holds, for at most timeout.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// approve plays the operator and the signer for the pending CSR name.
func (cp *fakeControlPlane) approve(t *testing.T, name string, life time.Duration) {
	t.Helper()
	res := certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests")
	obj, err := cp.client.Tracker().Get(res, "", name)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.(*certificatesv1.CertificateSigningRequest).DeepCopy()
	req := parseCSR(t, c.Spec.Request)
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ApprovedByTest",
	})
	c.Status.Certificate = cp.ca.issue(t, req.PublicKey, req.Subject, time.Now().Add(-time.Second), life)
	if err := cp.client.Tracker().Update(res, c, ""); err != nil {
		t.Fatal(err)
	}
}

func (cp *fakeControlPlane) leavePending() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.ignore = true
}

// handshake connects a TLS client to a server using getCert and returns
// the certificate it was shown, or the handshake's error.
func handshake(t *testing.T, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) (*x509.Certificate, error) {
	t.Helper()
	sc, cc := net.Pipe()
	defer sc.Close()
	defer cc.Close()
	srv := tls.Server(sc, &tls.Config{GetCertificate: getCert, MinVersion: tls.VersionTLS12})
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Handshake() }()
	// The test checks the chain itself; the fake signer sets no SANs.
	cli := tls.Client(cc, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) // #nosec G402 -- see above
	err := cli.Handshake()
	serr := <-srvErr
	if err != nil {
		return nil, errors.Join(err, serr)
	}
	return cli.ConnectionState().PeerCertificates[0], nil
}

func TestServingTemplate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		addrs     []corev1.NodeAddress
		wantNames []string
		wantIPs   []string
	}{
		{"none", nil, nil, nil},
		{"a hostname only: no IP, no request", []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "host-a"}}, nil, nil},
		{"the agent's own", nodeAddresses, []string{"host-a"}, []string{"192.0.2.7"}},
		{"every kind, repeated and out of order", []corev1.NodeAddress{
			{Type: corev1.NodeExternalDNS, Address: "z.example"},
			{Type: corev1.NodeInternalIP, Address: "2001:db8::1"},
			{Type: corev1.NodeHostName, Address: "192.0.2.9"},
			{Type: corev1.NodeInternalDNS, Address: "a.example"},
			{Type: corev1.NodeExternalIP, Address: "192.0.2.8"},
			{Type: corev1.NodeInternalIP, Address: "192.0.2.8"},
			{Type: corev1.NodeInternalIP, Address: "not-an-ip"},
			{Type: corev1.NodeInternalDNS, Address: ""},
		}, []string{"a.example", "z.example"}, []string{"192.0.2.8", "192.0.2.9", "2001:db8::1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := servingTemplate("node-1", tc.addrs)
			if tc.wantIPs == nil {
				if got != nil {
					t.Fatalf("template %+v, want none", got)
				}
				return
			}
			if got.Subject.CommonName != "system:node:node-1" || !slices.Equal(got.Subject.Organization, []string{"system:nodes"}) {
				t.Errorf("subject %v", got.Subject)
			}
			var ips []string
			for _, ip := range got.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(got.DNSNames, tc.wantNames) || !slices.Equal(ips, tc.wantIPs) {
				t.Errorf("SANs %q %q, want %q %q", got.DNSNames, ips, tc.wantNames, tc.wantIPs)
			}
		})
	}
}

func TestServingOptionsAreChecked(t *testing.T) {
	e := newEnv(t)
	id := tokenIdentity(t, e)
	addrs := func() []corev1.NodeAddress { return nodeAddresses }
	for _, tc := range []struct {
		opts ServingOptions
		want string
	}{
		{ServingOptions{}, "Addresses, the source of the node's addresses, is required"},
		{ServingOptions{Addresses: addrs, CertFile: "/etc/a.crt"}, "CertFile and KeyFile (--tls-cert-file and --tls-private-key-file) go together"},
	} {
		tc.opts.Logger = testLogger(t)
		if _, err := id.NewServing(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.opts, err, tc.want)
		}
	}
	noDir := *id
	noDir.opts.CertDir = ""
	if _, err := noDir.NewServing(ServingOptions{Addresses: addrs, Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), "--cert-dir") {
		t.Errorf("no cert dir: %v", err)
	}
	readOnly := filepath.Join(e.dir, "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := *id
		ro.opts.CertDir = readOnly
		if _, err := ro.NewServing(ServingOptions{Addresses: addrs, Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), readOnly) {
			t.Errorf("read-only cert dir: %v", err)
		}
	}
}

// Before its CSR is approved the server has no certificate and says why;
// once it is signed, the next handshake presents it, without a restart.
func TestServingCertificateIsRequestedAndServedOnceIssued(t *testing.T) {
	e := newEnv(t)
	e.cp.leavePending()
	id := tokenIdentity(t, e)
	reg := metrics.NewKubeRegistry()
	s, err := id.NewServing(ServingOptions{Addresses: func() []corev1.NodeAddress { return nodeAddresses }, Logger: testLogger(t), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, s.GetCertificate); err == nil {
		t.Fatal("a handshake succeeded before any certificate was issued")
	}
	expiry := func(v int64) string {
		return fmt.Sprintf(`# HELP nodeagent_node_identity_serving_certificate_expiration_timestamp_seconds [ALPHA] When the node API's serving certificate expires, in seconds since the epoch; 0 without a valid certificate.
# TYPE nodeagent_node_identity_serving_certificate_expiration_timestamp_seconds gauge
nodeagent_node_identity_serving_certificate_expiration_timestamp_seconds %d
`, v)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expiry(0)), "nodeagent_node_identity_serving_certificate_expiration_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	runServing(t, s)

	eventually(t, "a CSR", 10*time.Second, func() bool { return len(e.cp.submitted()) > 0 })
	csr := e.cp.submitted()[0]
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName {
		t.Errorf("signer %q", csr.Spec.SignerName)
	}
	// An ECDSA key: no key encipherment, as the kubelet asks.
	if want := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}; !slices.Equal(csr.Spec.Usages, want) {
		t.Errorf("usages %v, want %v", csr.Spec.Usages, want)
	}
	req := parseCSR(t, csr.Spec.Request)
	if req.Subject.CommonName != "system:node:node-1" || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject %v", req.Subject)
	}
	if len(req.IPAddresses) != 1 || req.IPAddresses[0].String() != "192.0.2.7" || !slices.Equal(req.DNSNames, []string{"host-a"}) {
		t.Errorf("SANs %v %v", req.DNSNames, req.IPAddresses)
	}
	if e.cp.lastToken() != "node-token" {
		t.Errorf("CSR made with token %q, want the node's own", e.cp.lastToken())
	}
	// The CSR is noted once the apiserver has answered its creation.
	eventually(t, "the pending CSR named", 10*time.Second, func() bool {
		_, err := s.GetCertificate(nil)
		return err != nil && strings.Contains(err.Error(), csr.Name)
	})
	_, err = handshake(t, s.GetCertificate)
	if err == nil || !strings.Contains(err.Error(), csr.Name) || !strings.Contains(err.Error(), "awaits approval") {
		t.Errorf("handshake before approval: %v; want it refused, naming the pending CSR %s", err, csr.Name)
	}

	e.cp.approve(t, csr.Name, time.Hour)
	var served *x509.Certificate
	eventually(t, "the issued certificate served", 10*time.Second, func() bool {
		served, err = handshake(t, s.GetCertificate)
		return err == nil
	})
	if served.Subject.CommonName != "system:node:node-1" || !req.PublicKey.(*ecdsa.PublicKey).Equal(served.PublicKey) {
		t.Errorf("served %v, not the certificate for the CSR's key", served.Subject)
	}
	if err := served.CheckSignatureFrom(e.ca.cert); err != nil {
		t.Errorf("served certificate not signed by the cluster CA: %v", err)
	}
	stored := certOf(t, mustRead(t, filepath.Join(e.certDir, "kubelet-server-current.pem")))
	if stored.SerialNumber.Cmp(served.SerialNumber) != 0 {
		t.Errorf("kubelet-server-current.pem holds %s, served %s", stored.SerialNumber, served.SerialNumber)
	}
	if m := mode(t, filepath.Join(e.certDir, "kubelet-server-current.pem")); m != 0o600 && m&0o077 != 0 {
		t.Errorf("stored pair mode %v", m)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expiry(served.NotAfter.Unix())), "nodeagent_node_identity_serving_certificate_expiration_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if n := len(e.cp.submitted()); n != 1 {
		t.Errorf("%d CSRs, want 1", n)
	}
}

// A short-lived certificate is renewed while the server runs, and the
// next handshake presents the new one.
func TestServingCertificateRotates(t *testing.T) {
	e := newEnv(t, 6*time.Second, time.Hour)
	id := tokenIdentity(t, e)
	reg := metrics.NewKubeRegistry()
	s, err := id.NewServing(ServingOptions{Addresses: func() []corev1.NodeAddress { return nodeAddresses }, Logger: testLogger(t), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	runServing(t, s)
	var first *x509.Certificate
	eventually(t, "the first certificate served", 10*time.Second, func() bool {
		first, err = handshake(t, s.GetCertificate)
		return err == nil
	})
	var second *x509.Certificate
	eventually(t, "a renewed certificate served", 15*time.Second, func() bool {
		second, err = handshake(t, s.GetCertificate)
		return err == nil && second.SerialNumber.Cmp(first.SerialNumber) != 0
	})
	if !second.NotAfter.After(first.NotAfter) {
		t.Errorf("renewed certificate valid until %v, the first until %v", second.NotAfter, first.NotAfter)
	}
	if n := len(e.cp.submitted()); n != 2 {
		t.Errorf("%d CSRs, want 2", n)
	}
	for _, name := range []string{"nodeagent_node_identity_serving_certificate_rotation_seconds", "kubelet_certificate_manager_server_rotation_seconds"} {
		if n := histogramCount(t, reg, name); n != 1 {
			t.Errorf("%s: %d rotations observed, want 1", name, n)
		}
	}
}

// With --tls-cert-file, that pair is served until the cluster's arrives,
// as the kubelet does.
func TestServingCertificateReplacesTheGivenFile(t *testing.T) {
	e := newEnv(t)
	e.cp.leavePending()
	id := tokenIdentity(t, e)
	certPEM, keyPEM := e.ca.pair(t, "node-1", time.Now().Add(-time.Minute), time.Hour)
	certFile, keyFile := filepath.Join(e.dir, "given.crt"), filepath.Join(e.dir, "given.key")
	for p, data := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := id.NewServing(ServingOptions{Addresses: func() []corev1.NodeAddress { return nodeAddresses }, CertFile: certFile, KeyFile: keyFile, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	given := certOf(t, certPEM)
	got, err := handshake(t, s.GetCertificate)
	if err != nil || got.SerialNumber.Cmp(given.SerialNumber) != 0 {
		t.Fatalf("before any issue: served %v (%v), want --tls-cert-file's %s", got, err, given.SerialNumber)
	}
	runServing(t, s)
	// The given pair lacks the node's SANs and O: a CSR is made at once.
	eventually(t, "a CSR", 10*time.Second, func() bool { return e.cp.csrCount(t) > 0 })
	e.cp.approve(t, e.cp.submitted()[0].Name, time.Hour)
	eventually(t, "the issued certificate served", 10*time.Second, func() bool {
		got, err = handshake(t, s.GetCertificate)
		return err == nil && got.SerialNumber.Cmp(given.SerialNumber) != 0
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// histogramCount is how many observations the histogram name holds.
func histogramCount(t *testing.T, reg metrics.KubeRegistry, name string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no histogram %s", name)
	return 0
}
