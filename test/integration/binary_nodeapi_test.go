package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// Connected mode, the node API: kubectl logs, exec and port-forward reach
// the agent through the apiserver (which calls it with its kubelet client
// certificate, signed by the cluster CA), and the agent has the apiserver
// authenticate and authorize every request.

func TestBinaryNodeAPI(t *testing.T) {
	_, portStr, _ := net.SplitHostPort(freeAddress(t))
	port, _ := strconv.Atoi(portStr)
	_, echoPort, _ := net.SplitHostPort(freeAddress(t))
	h := newConnectedAgent(t, "--node-ip=127.0.0.1", "--address=127.0.0.1", "--port="+portStr, "--client-ca-file="+env.CAFile)
	waitNode(t, "Ready, reporting the node API's port", 30*time.Second, func(n *corev1.Node) bool {
		return isReady(n) && n.Status.DaemonEndpoints.KubeletEndpoint.Port == int32(port) // #nosec G115 -- a port
	})

	pod := h.apiPodSpec("nodeapi",
		shContainer("logger", `i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.1; done`),
		shContainer("echo", "exec nc -ll -p "+echoPort+" -e cat"),
		shContainer("crasher", `echo "run at $(date +%s%N)"; sleep 0.5; exit 1`),
	)
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "logger and echo running", 60*time.Second, func(p *corev1.Pod) bool {
		running := 0
		for _, c := range p.Status.ContainerStatuses {
			if c.Name != "crasher" && c.State.Running != nil {
				running++
			}
		}
		return p.UID == created.UID && running == 2
	})
	pods := env.AdminClient.CoreV1().Pods(pod.Namespace)
	ctx := context.Background()

	t.Run("logs with tailLines", func(t *testing.T) {
		var lines []string
		eventuallyTrue(t, "two tail lines", 10*time.Second, func() (bool, string) {
			out, err := pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: "logger", TailLines: ptr.To[int64](2)}).DoRaw(ctx)
			lines = strings.Split(strings.TrimSpace(string(out)), "\n")
			return err == nil && len(lines) == 2, fmt.Sprintf("%q, %v", out, err)
		})
		if !consecutive(t, lines) {
			t.Errorf("tail lines %q are not consecutive log lines", lines)
		}
	})

	t.Run("logs of a pod that completed", func(t *testing.T) {
		// The agent removes a finished pod's containers; its logs stay
		// readable until the pod is deleted, as on the kubelet.
		done := h.apiPodSpec("nodeapi-done", shContainer("once", `echo "done $((6*7))"`))
		done.Spec.RestartPolicy = corev1.RestartPolicyNever
		h.createAPIPod(done)
		h.waitAPIPod(done.Name, "Succeeded", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		eventuallyTrue(t, "the completed container's log", 10*time.Second, func() (bool, string) {
			out, err := pods.GetLogs(done.Name, &corev1.PodLogOptions{Container: "once"}).DoRaw(ctx)
			return err == nil && string(out) == "done 42\n", fmt.Sprintf("%q, %v", out, err)
		})
		out, err := pods.GetLogs(done.Name, &corev1.PodLogOptions{Container: "once", Follow: true}).DoRaw(ctx)
		if err != nil || string(out) != "done 42\n" {
			t.Errorf("following the completed container's log: %q, %v; want it whole, then the end", out, err)
		}
	})

	t.Run("logs with follow and timestamps", func(t *testing.T) {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		rc, err := pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: "logger", Follow: true, TailLines: ptr.To[int64](1), Timestamps: true}).Stream(sctx)
		if err != nil {
			t.Fatalf("following the log: %v", err)
		}
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		var lines []string
		for len(lines) < 5 && sc.Scan() {
			ts, text, _ := strings.Cut(sc.Text(), " ")
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("line %q: no timestamp: %v", sc.Text(), err)
			}
			lines = append(lines, text)
		}
		if len(lines) < 5 {
			t.Fatalf("followed %d lines (%q), want 5: %v", len(lines), lines, sc.Err())
		}
		if !consecutive(t, lines) {
			t.Errorf("followed lines %q are not consecutive", lines)
		}
	})

	t.Run("logs of the previous instance", func(t *testing.T) {
		eventuallyTrue(t, "the previous crasher's log", 40*time.Second, func() (bool, string) {
			out, err := pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: "crasher", Previous: true}).DoRaw(ctx)
			return err == nil && strings.HasPrefix(string(out), "run at "), fmt.Sprintf("%q, %v", out, err)
		})
		// The apiserver passes the node's message on in a Status, which
		// kubectl prints (client-go's typed GetLogs does not decode it).
		code, body := rawGet(t, pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: "logger", Previous: true}).URL().String())
		var status metav1.Status
		if err := json.Unmarshal([]byte(body), &status); err != nil || code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest ||
			!strings.Contains(status.Message, `previous terminated container "logger"`) {
			t.Errorf("previous log of a container that never restarted: %d %s, want a BadRequest naming it", code, body)
		}
	})

	t.Run("exec with stdout, stderr and stdin", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := apiExec(ctx, pod, "logger", []string{"sh", "-c", "echo out-$((6*7)); echo err-1 >&2; cat"},
			strings.NewReader("from stdin\n"), &stdout, &stderr, false)
		if err != nil {
			t.Fatalf("exec: %v (stderr %q)", err, stderr.String())
		}
		if got, want := stdout.String(), "out-42\nfrom stdin\n"; got != want {
			t.Errorf("stdout %q, want %q", got, want)
		}
		if got := stderr.String(); got != "err-1\n" {
			t.Errorf("stderr %q, want %q", got, "err-1\n")
		}
	})

	t.Run("exec with a TTY and an exit code", func(t *testing.T) {
		var stdout bytes.Buffer
		err := apiExec(ctx, pod, "logger", []string{"sh", "-c", "test -t 1 && echo tty; exit 3"}, nil, &stdout, nil, true)
		if err == nil || !strings.Contains(err.Error(), "3") {
			t.Errorf("exit 3: err %v, want one naming the code", err)
		}
		if !strings.Contains(stdout.String(), "tty") {
			t.Errorf("stdout %q: the command saw no terminal", stdout.String())
		}
	})

	t.Run("attach reads the main process's output", func(t *testing.T) {
		actx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		out := &lineWaiter{want: "line ", found: make(chan struct{})}
		errc := make(chan error, 1)
		go func() { errc <- apiStream(actx, pod, "attach", "logger", nil, nil, out, nil, false) }()
		select {
		case <-out.found:
			cancel()
		case err := <-errc:
			t.Fatalf("attach ended before a line: %v", err)
		case <-actx.Done():
			t.Fatal("attach: no line of the logger's output in 20 s")
		}
		<-errc
	})

	t.Run("port-forward exchanges bytes", func(t *testing.T) {
		local := portForward(t, pod, echoPort)
		conn, err := net.DialTimeout("tcp", local, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16) // 64 KiB
		go func() { _, _ = conn.Write(payload) }()
		got := make([]byte, len(payload))
		if _, err := io.ReadFull(conn, got); err != nil {
			t.Fatalf("reading the echo: %v", err)
		}
		if !bytes.Equal(got, payload) {
			t.Error("the echo differs from what was sent")
		}
	})

	nodeAPI := "https://127.0.0.1:" + portStr
	t.Run("no credentials: 401", func(t *testing.T) {
		for _, p := range []string{"/pods", "/healthz", "/containerLogs/default/" + pod.Name + "/logger"} {
			if code, body := directGet(t, nodeAPI+p, ""); code != http.StatusUnauthorized {
				t.Errorf("GET %s without credentials: %d %q, want 401", p, code, body)
			}
		}
	})

	t.Run("an unprivileged token: 403; the node's own: 403 on exec", func(t *testing.T) {
		token := serviceAccountToken(t, "nodeapi-nobody")
		if code, body := directGet(t, nodeAPI+"/pods", token); code != http.StatusForbidden {
			t.Errorf("GET /pods as a service account: %d %q, want 403", code, body)
		}
		nodeToken := env.NodeConfig.BearerToken
		if nodeToken == "" {
			t.Fatal("the node's config has no token")
		}
		execPath := "/exec/default/" + pod.Name + "/logger?command=true&output=1"
		if code, body := directGet(t, nodeAPI+execPath, nodeToken); code != http.StatusForbidden || !strings.Contains(body, "proxy") {
			t.Errorf("exec as the node itself: %d %q, want 403 naming nodes/proxy", code, body)
		}
	})

	// The apiserver's nodes/proxy refuses a node on a loopback address, so
	// /pods is asked directly, with the apiserver's kubelet client
	// certificate (signed by the cluster CA; system:masters).
	pki := filepath.Dir(env.CAFile)
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-kubelet-client.crt"), filepath.Join(pki, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("/metrics/resource, as metrics-server scrapes it", func(t *testing.T) {
		code, body := directGetAs(t, nodeAPI+"/metrics/resource", "", &cert)
		if code != http.StatusOK {
			t.Fatalf("/metrics/resource: %d %q", code, body)
		}
		for _, prefix := range []string{
			"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ",
			`container_cpu_usage_seconds_total{container="logger",namespace="default",pod="` + pod.Name + `"} `,
			`container_memory_working_set_bytes{container="echo",namespace="default",pod="` + pod.Name + `"} `,
			`pod_cpu_usage_seconds_total{namespace="default",pod="` + pod.Name + `"} `,
			`pod_memory_working_set_bytes{namespace="default",pod="` + pod.Name + `"} `,
			"resource_scrape_error 0",
		} {
			if !strings.Contains(body, "\n"+prefix) {
				t.Errorf("no %q line in:\n%s", prefix, body)
			}
		}
	})

	t.Run("/stats/summary", func(t *testing.T) {
		code, body := directGetAs(t, nodeAPI+"/stats/summary", "", &cert)
		if code != http.StatusOK {
			t.Fatalf("/stats/summary: %d %q", code, body)
		}
		var sum statsv1alpha1.Summary
		if err := json.Unmarshal([]byte(body), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Node.NodeName != h.node || sum.Node.CPU == nil || sum.Node.Memory == nil || *sum.Node.Memory.WorkingSetBytes == 0 {
			t.Errorf("node stats: %s", body)
		}
		var found bool
		for _, p := range sum.Pods {
			if p.PodRef.UID == string(created.UID) {
				found = true
				if p.CPU == nil || p.Memory == nil || len(p.Containers) < 2 {
					t.Errorf("pod stats: %+v", p)
				}
			}
		}
		if !found {
			t.Errorf("no stats of pod %s: %s", created.UID, body)
		}
	})

	t.Run("/pods with the apiserver's client certificate", func(t *testing.T) {
		code, body := directGetAs(t, nodeAPI+"/pods", "", &cert)
		if code != http.StatusOK {
			t.Fatalf("/pods: %d %q", code, body)
		}
		var list corev1.PodList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range list.Items {
			found = found || p.UID == created.UID && p.Status.Phase == corev1.PodRunning
		}
		if !found {
			t.Errorf("/pods does not list pod %s running: %s", created.UID, body)
		}
	})
}

// rawGet is the apiserver's answer to a GET of u as the admin.
func rawGet(t *testing.T, u string) (int, string) {
	t.Helper()
	rt, err := rest.TransportFor(env.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// lineWaiter closes found once what was written holds want.
type lineWaiter struct {
	mu    sync.Mutex
	buf   strings.Builder
	want  string
	found chan struct{}
	done  bool
}

func (l *lineWaiter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.done && strings.Contains(l.buf.String(), l.want) {
		l.done = true
		close(l.found)
	}
	return len(p), nil
}

// consecutive: the lines are "line N", "line N+1", ...
func consecutive(t *testing.T, lines []string) bool {
	t.Helper()
	prev := -1
	for _, l := range lines {
		n, err := strconv.Atoi(strings.TrimPrefix(l, "line "))
		if err != nil || prev >= 0 && n != prev+1 {
			return false
		}
		prev = n
	}
	return true
}

// apiExec runs cmd in the container as kubectl exec does: WebSocket first,
// SPDY if the upgrade fails.
func apiExec(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) error {
	return apiStream(ctx, pod, "exec", container, cmd, stdin, stdout, stderr, tty)
}

// apiStream is an exec or attach session, as kubectl opens it.
func apiStream(ctx context.Context, pod *corev1.Pod, subresource, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) error {
	req := env.AdminClient.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource(subresource)
	if subresource == "exec" {
		req.VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil && !tty, TTY: tty}, scheme.ParameterCodec)
	} else {
		req.VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil && !tty, TTY: tty}, scheme.ParameterCodec)
	}
	ws, err := remotecommand.NewWebSocketExecutor(env.AdminConfig, "GET", req.URL().String())
	if err != nil {
		return err
	}
	sp, err := remotecommand.NewSPDYExecutor(env.AdminConfig, "POST", req.URL())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool { return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err) })
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty})
}

// portForward forwards a local port to the pod's port until the test
// ends, as kubectl port-forward does (WebSocket tunnel, SPDY fallback),
// and returns the local address.
func portForward(t *testing.T, pod *corev1.Pod, podPort string) string {
	t.Helper()
	u := env.AdminClient.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(env.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, "POST", u)
	wsDialer, err := portforward.NewSPDYOverWebsocketDialer(u, env.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	dialer := portforward.NewFallbackDialer(wsDialer, spdyDialer, func(err error) bool { return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err) })
	stop, ready := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + podPort}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- pf.ForwardPorts() }()
	t.Cleanup(func() { close(stop); <-errc })
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("port-forward: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("port-forward: not ready in 20 s")
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		t.Fatalf("port-forward ports: %v %v", ports, err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local)))
}

// directGet calls the node API itself, bypassing the apiserver, with a
// bearer token or none.
func directGet(t *testing.T, rawURL, token string) (int, string) {
	t.Helper()
	return directGetAs(t, rawURL, token, nil)
}

// directGetAs is directGet with a client certificate.
func directGetAs(t *testing.T, rawURL, token string, cert *tls.Certificate) (int, string) {
	t.Helper()
	tlsConf := &tls.Config{InsecureSkipVerify: true} // #nosec G402 -- the agent's self-signed serving certificate
	if cert != nil {
		tlsConf.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConf}}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", (&url.URL{Path: req.URL.Path}).String(), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// serviceAccountToken makes a service account with no roles and returns a
// token of it.
func serviceAccountToken(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	sas := env.AdminClient.CoreV1().ServiceAccounts(metav1.NamespaceDefault)
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s: %v", name, err)
	}
	t.Cleanup(func() { _ = sas.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	tr, err := sas.CreateToken(ctx, name, &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s: %v", name, err)
	}
	return tr.Status.Token
}
