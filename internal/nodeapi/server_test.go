package nodeapi

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/cri-client/pkg/logs"

	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeRuntime serves one pod's containers; its streams go to streamURL.
type fakeRuntime struct {
	mu        sync.Mutex
	status    runtime.PodStatus
	streamURL *url.URL
	logs      map[string]string // by container ID
	execs     [][]string
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID) (*runtime.PodStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if uid != f.status.ID {
		return &runtime.PodStatus{ID: uid}, nil
	}
	st := f.status
	return &st, nil
}

func (f *fakeRuntime) ExecURL(_ context.Context, id string, cmd []string, _ runtime.StreamOptions) (*url.URL, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs = append(f.execs, append([]string{id}, cmd...))
	return f.streamURL, nil
}

func (f *fakeRuntime) AttachURL(context.Context, string, runtime.StreamOptions) (*url.URL, error) {
	return f.streamURL, nil
}

func (f *fakeRuntime) PortForwardURL(context.Context, types.UID) (*url.URL, error) {
	return f.streamURL, nil
}

func (f *fakeRuntime) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) (runtime.ExecResult, error) {
	return runtime.ExecResult{Stdout: []byte(id + ": " + strings.Join(cmd, " ") + "\n")}, nil
}

func (f *fakeRuntime) ReadLogs(_ context.Context, id string, _ *logs.LogOptions, stdout, _ io.Writer) error {
	f.mu.Lock()
	text, ok := f.logs[id]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("container %s: no log", id)
	}
	_, err := io.WriteString(stdout, text)
	return err
}

func (f *fakeRuntime) ContainerStats(context.Context) ([]runtime.ContainerUsage, error) {
	at := time.Unix(1700000000, 0)
	return []runtime.ContainerUsage{
		{ID: "app-2", Name: "app", PodUID: "uid-1", PodName: "web", PodNamespace: "default",
			CPU: 1500 * time.Millisecond, CPUTime: at, HasCPU: true, MemoryWorkingSet: 1 << 20, MemoryTime: at, HasMemory: true},
		{ID: "side-1", Name: "side", PodUID: "uid-1", PodName: "web", PodNamespace: "default",
			CPU: 500 * time.Millisecond, CPUTime: at, HasCPU: true, MemoryWorkingSet: 1 << 20, MemoryTime: at, HasMemory: true},
	}, nil
}

// reviewer answers the server's TokenReviews and SubjectAccessReviews as
// an apiserver would: alice-token is alice, who may do anything with the
// node; bob-token is bob, who may do nothing.
type reviewer struct {
	mu           sync.Mutex
	tokenReviews int
	sars         []authzv1.ResourceAttributes
}

// client is a clientset whose apiserver is rv: the delegating
// authenticator and authorizer post their reviews over HTTP.
func (rv *reviewer) client(t *testing.T) kubernetes.Interface {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(rv.serve))
	t.Cleanup(api.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (rv *reviewer) serve(w http.ResponseWriter, r *http.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authnv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rv.tokenReviews++
		if name, ok := strings.CutSuffix(tr.Spec.Token, "-token"); ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: name}}
		}
		_ = json.NewEncoder(w).Encode(&tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authzv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil || sar.Spec.ResourceAttributes == nil {
			http.Error(w, fmt.Sprintf("%v", err), http.StatusBadRequest)
			return
		}
		rv.sars = append(rv.sars, *sar.Spec.ResourceAttributes)
		sar.Status.Allowed = sar.Spec.User == "alice" || sar.Spec.User == "carol"
		_ = json.NewEncoder(w).Encode(&sar)
	default:
		http.NotFound(w, r)
	}
}

type world struct {
	t      *testing.T
	rt     *fakeRuntime
	rv     *reviewer
	srv    *Server
	base   string
	client *http.Client
	cancel context.CancelFunc
	done   chan error
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

func newWorld(t *testing.T, backend http.Handler) *world {
	t.Helper()
	w := &world{t: t, rv: &reviewer{}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "idle"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	w.rt = &fakeRuntime{
		status: runtime.PodStatus{ID: "uid-1", Containers: []runtime.ContainerStatus{
			{ID: "app-2", Name: "app", State: runtime.ContainerStateRunning},
			{ID: "app-1", Name: "app", State: runtime.ContainerStateExited},
			{ID: "idle-1", Name: "idle", State: runtime.ContainerStateExited},
		}},
		logs: map[string]string{"app-2": "now 1\nnow 2\n", "app-1": "before\n"},
	}
	if backend != nil {
		b := httptest.NewServer(backend)
		t.Cleanup(b.Close)
		w.rt.streamURL, _ = url.Parse(b.URL + "/stream/token")
	}
	dir := t.TempDir()
	w.ca, w.caKey = newCA(t)
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Address: "127.0.0.1", Port: 0, CertDir: filepath.Join(dir, "pki"), IPs: []net.IP{net.ParseIP("127.0.0.1")},
		ClientCAFile: caFile, NodeName: "node-1", Client: w.rv.client(t),
		Runtime: w.rt, Pods: func() []*corev1.Pod { return []*corev1.Pod{pod} },
		NodeUsage: func() (node.Usage, error) {
			return node.Usage{CPU: 90 * time.Second, MemoryWorkingSet: 3 << 30, Time: time.Unix(1700000001, 0)}, nil
		},
		Logger: testr.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = srv
	w.base = fmt.Sprintf("https://127.0.0.1:%d", srv.Port())
	pool := x509.NewCertPool()
	servingCert, err := os.ReadFile(filepath.Join(dir, "pki", selfSignedCert))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(servingCert)
	w.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan error, 1)
	go func() { w.done <- srv.Run(ctx) }()
	t.Cleanup(w.stop)
	return w
}

func (w *world) stop() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
		if err := <-w.done; err != nil {
			w.t.Errorf("Run: %v", err)
		}
		w.client.CloseIdleConnections()
	}
}

func (w *world) do(method, path, token string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(method, w.base+path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

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

func TestContainerLogs(t *testing.T) {
	w := newWorld(t, nil)
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/containerLogs/default/web/app", 200, "now 1\nnow 2\n"},
		{"/containerLogs/default/web/app?previous=true", 200, "before\n"},
		{"/containerLogs/default/web/idle?previous=true", 400, "previous terminated container \"idle\" in pod \"web\" not found\n"},
		{"/containerLogs/default/web/nope", 404, "container nope is not in pod default/web\n"},
		{"/containerLogs/default/gone/app", 404, "pod default/gone does not exist\n"},
		{"/containerLogs/default/web/app?tailLines=-1", 400, "tailLines=\"-1\": want an integer of at least 0\n"},
	} {
		code, body := w.do("GET", tc.path, "alice-token")
		if code != tc.code || body != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
}

func TestRun(t *testing.T) {
	w := newWorld(t, nil)
	if code, body := w.do("POST", "/run/default/web/app?cmd=echo+hi", "alice-token"); code != 200 || body != "app-2: echo hi\n" {
		t.Errorf("run: %d %q", code, body)
	}
	if code, body := w.do("POST", "/run/default/web/idle?cmd=true", "alice-token"); code != 400 || !strings.Contains(body, "not running") {
		t.Errorf("run in a stopped container: %d %q", code, body)
	}
	if code, _ := w.do("GET", "/run/default/web/app?cmd=true", "alice-token"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /run: %d, want 405", code)
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

// echoUpgrade is a streaming server that switches to a raw echo of
// what the client sends, and says whether it saw credentials.
func echoUpgrade(sawAuth *bool, mu *sync.Mutex) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*sawAuth = r.Header.Get("Authorization") != ""
		mu.Unlock()
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	})
}

func TestExecIsProxiedToTheRuntime(t *testing.T) {
	var sawAuth bool
	var mu sync.Mutex
	w := newWorld(t, echoUpgrade(&sawAuth, &mu))

	// A request that does not upgrade is refused by the proxy.
	if code, _ := w.do("POST", "/exec/default/web/app?command=sh&output=1", "alice-token"); code != http.StatusBadRequest {
		t.Errorf("exec without an upgrade: %d, want 400", code)
	}
	if code, body := w.do("POST", "/exec/default/web/app?command=sh", "alice-token"); code != http.StatusBadRequest || !strings.Contains(body, "at least one of") {
		t.Errorf("exec without streams: %d %q", code, body)
	}
	if code, body := w.do("POST", "/exec/default/web/uid-2/app?command=sh&output=1", "alice-token"); code != http.StatusNotFound {
		t.Errorf("exec naming another UID: %d %q, want 404", code, body)
	}

	conn := w.upgrade("/exec/default/web/uid-1/app?command=sh&command=-c&command=echo+hi&input=1&output=1")
	defer conn.Close()
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Errorf("echo through the proxy: %q %v", line, err)
	}
	mu.Lock()
	if sawAuth {
		t.Error("the client's credentials reached the runtime's streaming server")
	}
	mu.Unlock()
	w.rt.mu.Lock()
	if got := strings.Join(w.rt.execs[len(w.rt.execs)-1], " "); got != "app-2 sh -c echo hi" {
		t.Errorf("exec asked of the runtime: %q", got)
	}
	w.rt.mu.Unlock()

	// Stopping the server ends the proxied stream.
	w.stop()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("the stream after the server stopped: %v, want it closed", err)
	}
}

func TestPortForwardIsProxiedToTheRuntime(t *testing.T) {
	var sawAuth bool
	var mu sync.Mutex
	w := newWorld(t, echoUpgrade(&sawAuth, &mu))
	conn := w.upgrade("/portForward/default/web")
	defer conn.Close()
	if _, err := conn.Write([]byte("pf\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "pf\n" {
		t.Errorf("echo through the proxy: %q %v", line, err)
	}
}

// upgrade opens an upgraded connection to path as alice.
func (w *world) upgrade(path string) net.Conn {
	w.t.Helper()
	tlsConf := w.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(w.base, "https://"), tlsConf)
	if err != nil {
		w.t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer alice-token\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n", path)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		w.t.Fatalf("upgrade %s: %d %q", path, resp.StatusCode, body)
	}
	return conn
}

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

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func clientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, user string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestResourceMetrics(t *testing.T) {
	w := newWorld(t, nil)
	code, body := w.do("GET", "/metrics/resource", "alice-token")
	if code != http.StatusOK {
		t.Fatalf("/metrics/resource: %d %q", code, body)
	}
	for _, line := range []string{
		"node_cpu_usage_seconds_total 90 1700000001000",
		"node_memory_working_set_bytes 3.221225472e+09 1700000001000",
		`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 1.5 1700000000000`,
		`container_memory_working_set_bytes{container="side",namespace="default",pod="web"} 1.048576e+06 1700000000000`,
		`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 2 1700000000000`,
		`pod_memory_working_set_bytes{namespace="default",pod="web"} 2.097152e+06 1700000000000`,
		"resource_scrape_error 0",
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("no line %q in:\n%s", line, body)
		}
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if last := w.rv.sars[len(w.rv.sars)-1]; last.Subresource != "metrics" {
		t.Errorf("authorized as nodes/%s, want nodes/metrics", last.Subresource)
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
