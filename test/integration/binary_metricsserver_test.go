package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/ptr"
)

// Connected mode, `kubectl top`: the real metrics-server (built from the
// Go module proxy at the version hack/versions.sh pins) scrapes the
// agent's /metrics/resource as it scrapes a kubelet, at the node's
// InternalIP and the port the Node reports, trusting the node's serving
// certificate through the cluster CA; the apiserver's aggregation layer
// serves what it keeps as metrics.k8s.io, which the real kubectl reads.

// metricsNodeIP is a node address that is not loopback (the apiserver's
// proxy and metrics-server treat a node as remote), on lo for the test.
// hack/conformance.sh's node uses 10.235.253.1.
const metricsNodeIP = "10.235.253.2"

const (
	metricsServerName      = "metrics-server"
	metricsServerNamespace = metav1.NamespaceSystem
	metricsAPIService      = "v1beta1.metrics.k8s.io"
)

func TestBinaryMetricsServer(t *testing.T) {
	if env.MetricsServerBin == "" || env.KubectlBin == "" {
		t.Fatal("the control plane's env names no metrics-server or kubectl binary (hack/controlplane-build.sh builds them)")
	}
	nodeAddressUp(t, metricsNodeIP)
	dir := t.TempDir()
	ip := net.ParseIP(metricsNodeIP)

	// The node serves with a certificate the cluster CA signed, so
	// metrics-server checks it (--kubelet-certificate-authority) rather
	// than trusting any.
	nodeCert, nodeKey := signServingCert(t, dir, "node", []string{env.NodeName}, ip)
	nodePort := freePortOn(t, metricsNodeIP)
	h := newConnectedAgent(t, "--node-ip="+metricsNodeIP, "--address="+metricsNodeIP, "--port="+nodePort,
		"--client-ca-file="+env.CAFile, "--tls-cert-file="+nodeCert, "--tls-private-key-file="+nodeKey)
	waitNode(t, "Ready at "+metricsNodeIP+":"+nodePort, 30*time.Second, func(n *corev1.Node) bool {
		internal := false
		for _, a := range n.Status.Addresses {
			internal = internal || a.Type == corev1.NodeInternalIP && a.Address == metricsNodeIP
		}
		return isReady(n) && internal && strconv.Itoa(int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)) == nodePort
	})

	// One container burns CPU, one holds 16 MiB in a shell variable (all
	// of which its working set counts, as anonymous memory).
	const held = 16 << 20
	pod := h.apiPodSpec("top",
		shContainer("burner", "while :; do :; done"),
		shContainer("holder", fmt.Sprintf(`x=$(yes x | head -c %d); %s`, held, sleepForever)),
	)
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "running", 60*time.Second, apiPodRunning(created.UID))

	startMetricsServer(t, dir)

	k := newKubectl(t, writeKubeconfig(t, env.AdminConfig, t.TempDir()))
	// metrics-server needs two scrapes of a container (10 s apart) for a
	// CPU rate, and the APIService must be Available first.
	const within = 90 * time.Second

	t.Run("kubectl top node", func(t *testing.T) {
		var row []string
		eventuallyTrue(t, "kubectl top node with the node's figures", within, func() (bool, string) {
			r := k.run("", "top", "node", "--no-headers")
			if r.code != 0 {
				return false, r.String()
			}
			out := r.stdout
			row = topRow(out, env.NodeName)
			// NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)
			return len(row) >= 4 && positive(row[1]) && positive(row[3]), out
		})
		t.Logf("kubectl top node: %s", strings.Join(row, " "))
	})

	t.Run("kubectl top pod", func(t *testing.T) {
		var row []string
		eventuallyTrue(t, "kubectl top pod with the pod's figures", within, func() (bool, string) {
			r := k.run("", "top", "pod", "-n", pod.Namespace, "--no-headers")
			if r.code != 0 {
				return false, r.String()
			}
			out := r.stdout
			row = topRow(out, pod.Name)
			// NAME CPU(cores) MEMORY(bytes)
			if len(row) < 3 || !positive(row[1]) {
				return false, out
			}
			mem, err := resource.ParseQuantity(row[2])
			// kubectl prints whole MiB, rounded down, and the working set
			// is held give or take the shells' own pages: three quarters
			// of it is what no idle pod uses.
			return err == nil && mem.Value() >= held*3/4, fmt.Sprintf("%s(want memory of at least %d bytes)", out, held*3/4)
		})
		t.Logf("kubectl top pod: %s", strings.Join(row, " "))
	})
}

// startMetricsServer runs metrics-server as a process on the node's
// address, under a service account with its upstream RBAC, behind a
// Service without selector, an EndpointSlice to that address and the
// metrics.k8s.io APIService, all removed when the test ends (the
// APIService first: an unavailable one fails discovery for every later
// test). It fails the test if metrics-server exits or the APIService is
// not Available within a minute.
func startMetricsServer(t *testing.T, dir string) {
	t.Helper()
	kubeconfig := metricsServerIdentity(t)
	cert, key := signServingCert(t, dir, metricsServerName,
		[]string{metricsServerName + "." + metricsServerNamespace + ".svc"}, net.ParseIP(metricsNodeIP))
	port := freePortOn(t, metricsNodeIP)
	logPath := filepath.Join(dir, "metrics-server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.MetricsServerBin,
		"--bind-address="+metricsNodeIP, "--secure-port="+port,
		"--tls-cert-file="+cert, "--tls-private-key-file="+key,
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port",
		"--kubelet-certificate-authority="+env.CAFile,
		// Its smallest resolution; a scrape must end within 90% of it.
		"--metric-resolution=10s", "--kubelet-request-timeout=5s",
		"-v=2")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting metrics-server %s: %v", env.MetricsServerBin, err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); logFile.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("metrics-server's log:\n%s", tail(logPath, 60))
		}
	})

	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: metricsServerNamespace},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("https")}}},
	}
	if _, err := env.AdminClient.CoreV1().Services(metricsServerNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Service %s: %v", svc.Name, err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CoreV1().Services(metricsServerNamespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{})
	})
	portNum, _ := strconv.Atoi(port)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: metricsServerNamespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: metricsServerName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{metricsNodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(portNum)), Protocol: ptr.To(corev1.ProtocolTCP)}}, // #nosec G115 -- a port
	}
	if _, err := env.AdminClient.DiscoveryV1().EndpointSlices(metricsServerNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating EndpointSlice %s: %v", slice.Name, err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.DiscoveryV1().EndpointSlices(metricsServerNamespace).Delete(context.Background(), slice.Name, metav1.DeleteOptions{})
	})

	apiServices := apiServiceClient(t)
	ca, err := os.ReadFile(env.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": metricsAPIService},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"service":  map[string]any{"namespace": metricsServerNamespace, "name": metricsServerName, "port": int64(443)},
			"caBundle": base64.StdEncoding.EncodeToString(ca),
			// As metrics-server's own manifest.
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	if _, err := apiServices.Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating APIService %s: %v", metricsAPIService, err)
	}
	t.Cleanup(func() {
		if err := apiServices.Delete(context.Background(), metricsAPIService, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting APIService %s: %v", metricsAPIService, err)
		}
	})

	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-exited:
			t.Fatalf("metrics-server exited: %v\n%s", exitErr, tail(logPath, 60))
		default:
		}
		got, err := apiServices.Get(ctx, metricsAPIService, metav1.GetOptions{})
		available, why := apiServiceAvailable(got, err)
		if available {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("APIService %s not Available within a minute: %s\nmetrics-server's log:\n%s", metricsAPIService, why, tail(logPath, 60))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// metricsServerIdentity is a service account with the RBAC metrics-server's
// own manifests give it (read pods and nodes, get nodes/metrics, delegate
// authentication and authorization to the apiserver), and a kubeconfig with
// a token of it.
func metricsServerIdentity(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	rbac := env.AdminClient.RbacV1()
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: metricsServerName, Namespace: metricsServerNamespace}
	cleanup := func(what string, del func() error) {
		t.Cleanup(func() {
			if err := del(); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", what, err)
			}
		})
	}
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("creating %s: %v", what, err)
		}
	}
	sas := env.AdminClient.CoreV1().ServiceAccounts(metricsServerNamespace)
	_, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsServerName}}, metav1.CreateOptions{})
	must("ServiceAccount "+metricsServerName, err)
	cleanup("ServiceAccount", func() error { return sas.Delete(context.Background(), metricsServerName, metav1.DeleteOptions{}) })

	roles := []*rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
				"rbac.authorization.k8s.io/aggregate-to-admin": "true",
				"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
				"rbac.authorization.k8s.io/aggregate-to-view":  "true",
			}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
			},
		},
	}
	for _, r := range roles {
		_, err := rbac.ClusterRoles().Create(ctx, r, metav1.CreateOptions{})
		must("ClusterRole "+r.Name, err)
		cleanup("ClusterRole "+r.Name, func() error { return rbac.ClusterRoles().Delete(context.Background(), r.Name, metav1.DeleteOptions{}) })
	}
	for name, role := range map[string]string{
		"system:metrics-server":                "system:metrics-server",
		"metrics-server:system:auth-delegator": "system:auth-delegator",
	} {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: []rbacv1.Subject{sa},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
		_, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
		must("ClusterRoleBinding "+name, err)
		cleanup("ClusterRoleBinding "+name, func() error {
			return rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	// The front-proxy CA and requestheader names it must believe, in
	// kube-system/extension-apiserver-authentication.
	reader := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server-auth-reader"}, Subjects: []rbacv1.Subject{sa},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}}
	_, err = rbac.RoleBindings(metricsServerNamespace).Create(ctx, reader, metav1.CreateOptions{})
	must("RoleBinding "+reader.Name, err)
	cleanup("RoleBinding "+reader.Name, func() error {
		return rbac.RoleBindings(metricsServerNamespace).Delete(context.Background(), reader.Name, metav1.DeleteOptions{})
	})

	tr, err := sas.CreateToken(ctx, metricsServerName, &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	must("a token of "+metricsServerName, err)
	cfg := &rest.Config{Host: env.APIServerURL, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: env.CAFile}}
	return writeKubeconfig(t, cfg, t.TempDir())
}

func apiServiceClient(t *testing.T) dynamic.ResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
}

// apiServiceAvailable: its Available condition is True; otherwise why not.
func apiServiceAvailable(u *unstructured.Unstructured, err error) (bool, string) {
	if err != nil {
		return false, err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			return m["status"] == "True", fmt.Sprintf("%v: %v", m["reason"], m["message"])
		}
	}
	return false, "no Available condition yet"
}

// topRow is the fields of the row of kubectl top's output that names name.
func topRow(out, name string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

// positive: s is a quantity above zero.
func positive(s string) bool {
	q, err := resource.ParseQuantity(s)
	return err == nil && q.Sign() > 0
}

// freePortOn is a TCP port free on ip.
func freePortOn(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// signServingCert writes name.crt and name.key in dir: a serving
// certificate for the DNS names and the IP, signed by the cluster CA,
// valid for a day.
func signServingCert(t *testing.T, dir, name string, dnsNames []string, ip net.IP) (certFile, keyFile string) {
	t.Helper()
	cas, err := certutil.CertsFromFile(env.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := keyutil.PrivateKeyFromFile(env.CAKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dnsNames,
		IPAddresses:  []net.IP{ip},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, cas[0], &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := errors.Join(
		certutil.WriteCert(certFile, pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})),
		keyutil.WriteKey(keyFile, keyPEM),
	); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
