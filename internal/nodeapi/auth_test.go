package nodeapi

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestAuthentication(t *testing.T) {
	w := newWorld(t, nil)
	if code, body := w.do("GET", "/healthz", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %q, want 401", code, body)
	}
	if code, body := w.do("GET", "/healthz", "nobody"); code != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d %q, want 401", code, body)
	}
	if code, body := w.do("GET", "/healthz", "bob-token"); code != http.StatusForbidden || !strings.Contains(body, "user=bob") || !strings.Contains(body, "[healthz proxy]") {
		t.Errorf("bob: %d %q, want 403 naming him and the subresources", code, body)
	}
	for range 3 {
		if code, body := w.do("GET", "/healthz", "alice-token"); code != http.StatusOK || body != "ok" {
			t.Errorf("alice: %d %q", code, body)
		}
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	// alice, bob and the unknown token each reviewed once: the answers are cached.
	if w.rv.tokenReviews != 3 {
		t.Errorf("%d TokenReviews, want 3 (cached)", w.rv.tokenReviews)
	}
	// bob's healthz then proxy, alice's healthz once (cached).
	if len(w.rv.sars) != 3 {
		t.Errorf("SubjectAccessReviews %+v, want 3", w.rv.sars)
	}
	for _, a := range w.rv.sars {
		if a.Resource != "nodes" || a.Name != "node-1" || a.Verb != "get" {
			t.Errorf("SubjectAccessReview of %+v", a)
		}
	}
}

func TestClientCertificate(t *testing.T) {
	w := newWorld(t, nil)
	cert := clientCert(t, w.ca, w.caKey, "carol")
	tr := w.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	resp, err := c.Get(w.base + "/pods")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/pods with carol's certificate: %d %v", resp.StatusCode, err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web" || list.Items[0].Status.Phase != corev1.PodRunning || list.Kind != "PodList" {
		t.Errorf("/pods: %+v", list)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if w.rv.tokenReviews != 0 {
		t.Errorf("a client certificate was sent to TokenReview")
	}
	// A certificate of another CA is not carol.
	other, otherKey := newCA(t)
	tr.TLSClientConfig.Certificates = []tls.Certificate{clientCert(t, other, otherKey, "carol")}
	tr.CloseIdleConnections()
	resp2, err := c.Get(w.base + "/pods")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusUnauthorized {
		t.Errorf("a certificate of another CA: %d, want 401", resp2.StatusCode)
	}
}

func TestUncleanPathsAreRefused(t *testing.T) {
	w := newWorld(t, nil)
	for _, p := range []string{"/stats/../pods", "/pods/./", "/containerLogs/default/web%2Fapp/app"} {
		req, _ := http.NewRequest("GET", w.base+"/", nil)
		req.URL.Opaque = "//" + req.URL.Host + p // sent as written
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := w.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", p, resp.StatusCode)
		}
	}
}

func TestOversizedHeadersAreRefused(t *testing.T) {
	w := newWorld(t, nil)
	req, err := http.NewRequest("GET", w.base+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer alice-token")
	req.Header.Set("X-Padding", strings.Repeat("x", maxHeaderBytes+8<<10))
	resp, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers over %d bytes: %d, want 431", maxHeaderBytes, resp.StatusCode)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if w.rv.tokenReviews != 0 {
		t.Error("an oversized request reached the authenticator")
	}
}
