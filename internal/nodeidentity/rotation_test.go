package nodeidentity

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/metrics"
)

// A certificate renewed while the agent runs is presented by every
// request after the renewal: the connections made with the old one are
// closed (a watch-like stream sees its connection end), and the new ones
// handshake with the new certificate. A restart finds it too.
func TestRotationPresentsTheNewCertificate(t *testing.T) {
	// Renewed 7 to 9 s into its life, closed within 100 ms: the test fails
	// (401, expired) if a request rides an old connection past 10 s.
	e := newEnv(t, 10*time.Second, time.Hour)
	id := newIdentity(t, e.options())
	client := httpClient(t, id)
	first, err := whoami(t, client, e.server.URL)
	if err != nil {
		t.Fatal(err)
	}

	streamEnded := make(chan error, 1)
	resp, err := client.Get(e.server.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		streamEnded <- err
	}()

	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- id.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	deadline := time.Now().Add(15 * time.Second)
	var rotated string
	for rotated == "" && time.Now().Before(deadline) {
		serial, err := whoami(t, client, e.server.URL)
		var status *statusError
		switch {
		case errors.As(err, &status):
			t.Fatalf("request refused: %v", err) // e.g. an expired certificate presented
		case err != nil:
			t.Logf("request failed (a connection closed under it): %v", err)
		case serial != first:
			rotated = serial
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rotated == "" {
		t.Fatal("the new certificate was never presented")
	}
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Error("the stream on the old connection is still open")
	}
	for range 3 {
		if serial, err := whoami(t, client, e.server.URL); err != nil || serial != rotated {
			t.Errorf("after rotation: presented %q (%v), want %q", serial, err, rotated)
		}
	}

	// The server saw the old certificate, then only the new one, on
	// connections other than the old one's.
	seen := e.server.requests()
	oldConns := map[string]bool{}
	switched := false
	for _, r := range seen {
		if r.proto != 2 {
			t.Errorf("request over HTTP/%d, want HTTP/2 as with the apiserver", r.proto)
		}
		switch {
		case r.serial == first && switched:
			t.Errorf("old certificate presented after the new one: %+v", r)
		case r.serial == first:
			oldConns[r.conn] = true
		default:
			switched = true
			if oldConns[r.conn] {
				t.Errorf("new certificate on an old connection %s", r.conn)
			}
			if r.cn != "system:node:node-1" {
				t.Errorf("new certificate for %q", r.cn)
			}
		}
	}
	if n := len(e.cp.submitted()); n != 2 {
		t.Errorf("CSRs: %d, want 2 (bootstrap, renewal)", n)
	}

	// The kubeconfig on disk leads to the renewed pair.
	kc, err := loadUsable(e.kubeconfig, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := certOf(t, kc.rest.CertData).SerialNumber.String(); got != rotated {
		t.Errorf("kubeconfig's certificate %s, want the renewed %s", got, rotated)
	}
}

func TestCheckInterval(t *testing.T) {
	for _, tc := range []struct {
		life time.Duration
		want time.Duration
	}{
		{6 * time.Second, 100 * time.Millisecond},
		{time.Minute, 600 * time.Millisecond},
		{10 * time.Minute, 6 * time.Second},
		{365 * 24 * time.Hour, 10 * time.Second},
	} {
		c := certOf(t, newTestCA(t).issue(t, mustKey(t), nodeSubject("n"), time.Now(), tc.life))
		if got := checkInterval(tlsCert(c)); got != tc.want {
			t.Errorf("life %v: interval %v, want %v", tc.life, got, tc.want)
		}
	}
	if got := checkInterval(nil); got != time.Second {
		t.Errorf("no certificate: %v", got)
	}
}

// A renewal the apiserver refuses is counted, and retried.
func TestRenewalFailuresAreCounted(t *testing.T) {
	e := newEnv(t, 3*time.Second)
	reg := metrics.NewKubeRegistry()
	opts := e.options()
	opts.Registry = reg
	id := newIdentity(t, opts)
	e.cp.setRefusal(apierrors.NewServiceUnavailable("away"), 0)

	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- id.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()
	// Under the agent's name and the kubelet's.
	names := []string{"nodeagent_node_identity_certificate_renewal_failures_total", "kubelet_certificate_manager_client_expiration_renew_errors"}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		counted := 0
		for _, mf := range mfs {
			if slices.Contains(names, mf.GetName()) && mf.GetMetric()[0].GetCounter().GetValue() >= 1 {
				counted++
			}
		}
		if counted == len(names) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%v never both counted a refused renewal", names)
}

// A kubeconfig carrying its certificate inline (as kubeadm writes one) is
// used, and its pair is renewed at once into the cert dir, whose
// kubelet-client-current.pem the next start then prefers while valid.
func TestInlineCertificateIsRenewedIntoTheCertDir(t *testing.T) {
	e := newEnv(t)
	certPEM, keyPEM := e.ca.pair(t, "node-1", time.Now().Add(-time.Minute), time.Hour)
	writeKubeconfig(t, e.kubeconfig, e.server.URL, e.server.serverCAPEM(), &clientcmdapi.AuthInfo{
		ClientCertificateData: certPEM, ClientKeyData: keyPEM,
	})
	id := newIdentity(t, e.options())
	client := httpClient(t, id)
	if _, err := whoami(t, client, e.server.URL); err != nil { // a connection made with the inline pair
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- id.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.cp.submitted()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(e.cp.submitted()); n != 1 {
		t.Fatalf("CSRs: %d, want 1", n)
	}
	inline := certOf(t, certPEM).SerialNumber.String()
	// Presented within 2 s, where the periodic comparison of a 1-hour
	// certificate would take 10: the store's notice closed the old
	// connections at once.
	deadline = time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if serial, err := whoami(t, client, e.server.URL); err == nil && serial != inline {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("the renewed certificate was never presented")
}

// With rotation off the kubeconfig's certificate is used as it is, and Run
// only waits.
func TestRotationDisabled(t *testing.T) {
	e := newEnv(t)
	certPEM := storeNodeCertificate(t, e, time.Now().Add(-time.Minute), time.Hour)
	opts := e.options()
	opts.DisableRotation = true
	id := newIdentity(t, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := id.Run(ctx); err != nil {
		t.Errorf("Run: %v", err)
	}
	if n := len(e.cp.submitted()); n != 0 {
		t.Errorf("CSRs: %d, want 0", n)
	}
	if got, want := certOf(t, id.RESTConfig().CertData).SerialNumber, certOf(t, certPEM).SerialNumber; got.Cmp(want) != 0 {
		t.Error("the config does not carry the kubeconfig's certificate")
	}
}

// A certificate that expired before it could be renewed (the apiserver was
// away) is renewed with the bootstrap credentials, as the node's own no
// longer authenticate.
func TestExpiredCertificateRenewsWithBootstrapCredentials(t *testing.T) {
	e := newEnv(t, 3*time.Second, time.Hour)
	id := newIdentity(t, e.options())
	// The first renewal (1 to 2 s from now) is refused; the retry, 2 s
	// later, finds the certificate expired.
	e.cp.setRefusal(apierrors.NewServiceUnavailable("away"), 1)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error)
	go func() { ran <- id.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()
	deadline := time.Now().Add(15 * time.Second)
	for len(e.cp.submitted()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(e.cp.submitted()); n != 2 {
		t.Fatalf("CSRs: %d, want 2", n)
	}
	if got := e.cp.lastToken(); got != "abcdef.0123456789abcdef" {
		t.Errorf("renewed with token %q, want the bootstrap token", got)
	}
}
