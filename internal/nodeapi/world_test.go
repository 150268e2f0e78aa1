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
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/node"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// world is a Server over the fakes, running on a free port of 127.0.0.1,
// with a client that trusts its self-signed certificate and a client CA
// for certificates of test users.
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

	metrics, probeMetrics metrics.KubeRegistry
}

// scratchBytes is what the pod's emptyDir on disk holds.
const scratchBytes = 4096

func newWorld(t *testing.T, backend http.Handler) *world {
	t.Helper()
	return newWorldWith(t, backend, nil)
}

// newWorldWith is newWorld with its options changed by change.
func newWorldWith(t *testing.T, backend http.Handler, change func(*Options)) *world {
	t.Helper()
	w := &world{t: t, rv: &reviewer{}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app"}, {Name: "idle"}, {Name: "done"}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", ContainerID: "containerd://app-2", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1699999000, 0)}}},
			// side: a status of an instance before the one the runtime measures.
			{Name: "side", ContainerID: "containerd://side-0", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1699990000, 0)}}},
		}},
	}
	w.rt = &fakeRuntime{
		status: runtime.PodStatus{ID: "uid-1", Containers: []runtime.ContainerStatus{
			{ID: "app-2", Name: "app", State: runtime.ContainerStateRunning},
			{ID: "app-1", Name: "app", State: runtime.ContainerStateExited},
			{ID: "idle-1", Name: "idle", State: runtime.ContainerStateExited},
		}},
		logs: map[string]string{"app-2": "now 1\nnow 2\n", "app-1": "before\n"},
		// done: an instance the runtime removed, its log left behind.
		removedLogs: map[string]string{"done": "finished\n"},
		logDir:      t.TempDir(),
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
	w.metrics, w.probeMetrics = metrics.NewKubeRegistry(), metrics.NewKubeRegistry()
	opts := Options{
		Address: "127.0.0.1", Port: 0, CertDir: filepath.Join(dir, "pki"), IPs: []net.IP{net.ParseIP("127.0.0.1")},
		ClientCAFile: caFile, NodeName: "node-1", Client: w.rv.client(t),
		Runtime: w.rt, Pods: func() []*corev1.Pod { return []*corev1.Pod{pod} },
		NodeUsage: func() (node.Usage, error) {
			return node.Usage{CPU: 90 * time.Second, MemoryWorkingSet: 3 << 30, Time: time.Unix(1700000001, 0)}, nil
		},
		RootDir: dir,
		NodeInterfaces: func() ([]host.Interface, error) {
			return []host.Interface{{Name: "ens3", RxBytes: 1}, {Name: "eth0", RxBytes: 10, TxBytes: 20}}, nil
		},
		PodInterfaces: func(pid int) ([]host.Interface, error) {
			if pid != fakePID {
				return nil, fmt.Errorf("no process %d", pid)
			}
			return []host.Interface{{Name: "eth0", RxBytes: 1000, TxBytes: 2000}}, nil
		},
		VolumeUsage: func(uid types.UID, volume string) (int64, error) {
			if uid != "uid-1" || volume != "scratch" {
				return 0, fmt.Errorf("no emptyDir %s of %s", volume, uid)
			}
			return scratchBytes, nil
		},
		Metrics: w.metrics, ProbeMetrics: w.probeMetrics,
		Config:    map[string]string{"staticPodPath": "/etc/manifests"},
		Profiling: true,
		Logger:    testr.New(t),
	}
	if change != nil {
		change(&opts)
	}
	srv, err := New(opts)
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

// upgrade opens an upgraded connection to path as alice.
func (w *world) upgrade(path string) net.Conn {
	w.t.Helper()
	conn, resp := w.upgradeTo(path, "test-echo")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		w.t.Fatalf("upgrade %s: %d %q", path, resp.StatusCode, body)
	}
	return conn
}

// upgradeStatus is the status of an upgrade of path to protocol.
func (w *world) upgradeStatus(path, protocol string) int {
	w.t.Helper()
	conn, resp := w.upgradeTo(path, protocol)
	conn.Close()
	return resp.StatusCode
}

// upgradeTo asks, as alice, for an upgrade of path to protocol.
func (w *world) upgradeTo(path, protocol string) (net.Conn, *http.Response) {
	w.t.Helper()
	tlsConf := w.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(w.base, "https://"), tlsConf)
	if err != nil {
		w.t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer alice-token\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", path, protocol)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return conn, resp
}

// newCA makes a CA, and clientCert a client certificate it signs.
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
