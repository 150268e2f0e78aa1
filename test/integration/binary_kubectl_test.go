package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The node API as an operator uses it: the real kubectl, at the control
// plane's version, against the apiserver and a connected agent. The Node
// has a private InternalIP on lo, as the apiserver refuses nodes/proxy to
// a loopback address.

// kubectlNodeIP is this test's node address; other tests and engineers'
// runs use their own (10.235.253.2, 10.235.255.x for conformance).
const kubectlNodeIP = "10.235.253.1"

func TestBinaryKubectl(t *testing.T) {
	k := newKubectl(t, writeKubeconfig(t, env.AdminConfig, t.TempDir()))
	nodeAddressUp(t, kubectlNodeIP)
	_, portStr, _ := net.SplitHostPort(freeAddress(t))
	port, _ := strconv.Atoi(portStr)
	_, echoPort, _ := net.SplitHostPort(freeAddress(t))
	h := newConnectedAgent(t, "--node-ip="+kubectlNodeIP, "--address="+kubectlNodeIP, "--port="+portStr, "--client-ca-file="+env.CAFile)
	waitNode(t, "Ready at "+kubectlNodeIP+" with the node API's port", 30*time.Second, func(n *corev1.Node) bool {
		return isReady(n) && n.Status.DaemonEndpoints.KubeletEndpoint.Port == int32(port) && // #nosec G115 -- a port
			slices.Contains(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: kubectlNodeIP})
	})

	reader := shContainer("reader", `while read l; do echo "got $l"; done; sleep 3600`)
	reader.Stdin = true
	pod := h.apiPodSpec("kubectl",
		shContainer("logger", `i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.1; done`),
		shContainer("echo", "exec nc -ll -p "+echoPort+" -e cat"),
		shContainer("crasher", `echo "run at $(date +%s%N)"; sleep 0.5; exit 1`),
		reader,
	)
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "logger, echo and reader running", 60*time.Second, func(p *corev1.Pod) bool {
		running := 0
		for _, c := range p.Status.ContainerStatuses {
			if c.Name != "crasher" && c.State.Running != nil {
				running++
			}
		}
		return p.UID == created.UID && running == 3
	})
	name := pod.Name

	t.Run("logs --tail", func(t *testing.T) {
		var lines []string
		eventuallyTrue(t, "three tail lines", 10*time.Second, func() (bool, string) {
			r := k.run("", "logs", name, "-c", "logger", "--tail=3")
			lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
			return r.code == 0 && len(lines) == 3, r.String()
		})
		if !consecutive(t, lines) {
			t.Errorf("tail lines %q are not consecutive log lines", lines)
		}
	})

	t.Run("logs --since", func(t *testing.T) {
		// Once the log spans well over the window, the window's lines are
		// its end: later than the first line, and consecutive.
		var all []string
		eventuallyTrue(t, "5 s of log", 20*time.Second, func() (bool, string) {
			r := k.run("", "logs", name, "-c", "logger")
			all = strings.Split(strings.TrimSpace(r.stdout), "\n")
			return r.code == 0 && len(all) >= 50, fmt.Sprintf("%d lines; %s", len(all), r.stderr)
		})
		r := k.run("", "logs", name, "-c", "logger", "--since=2s")
		since := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || r.stdout == "" || !consecutive(t, since) {
			t.Fatalf("--since=2s: %s", r)
		}
		if lineNumber(since[0]) <= lineNumber(all[0]) || len(since) >= len(all) {
			t.Errorf("--since=2s begins at %q, the whole log at %q: want the window's end of the log", since[0], all[0])
		}
	})

	t.Run("logs -f --timestamps", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := k.command(ctx, "logs", "-f", name, "-c", "logger", "--tail=1", "--timestamps")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var lines []string
		for len(lines) < 5 && sc.Scan() {
			ts, text, _ := strings.Cut(sc.Text(), " ")
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("line %q: no timestamp: %v", sc.Text(), err)
			}
			lines = append(lines, text)
		}
		cancel() // following never ends by itself
		_ = cmd.Wait()
		if len(lines) < 5 {
			t.Fatalf("followed %d lines (%q), want 5: %v; stderr %q", len(lines), lines, sc.Err(), stderr.String())
		}
		if !consecutive(t, lines) {
			t.Errorf("followed lines %q are not consecutive", lines)
		}
	})

	t.Run("logs --previous", func(t *testing.T) {
		eventuallyTrue(t, "the previous crasher's log", 40*time.Second, func() (bool, string) {
			r := k.run("", "logs", name, "-c", "crasher", "--previous")
			return r.code == 0 && strings.HasPrefix(r.stdout, "run at "), r.String()
		})
		r := k.run("", "logs", name, "-c", "logger", "--previous")
		if r.code == 0 || !strings.Contains(r.stderr, `previous terminated container "logger"`) {
			t.Errorf("--previous of a container that never restarted: %s; want the node's refusal", r)
		}
	})

	t.Run("exec: streams and the exit code", func(t *testing.T) {
		r := k.run("", "exec", name, "-c", "logger", "--", "sh", "-c", "echo out-$((6*7)); echo err-1 >&2; exit 7")
		if r.code != 7 || r.stdout != "out-42\n" || !strings.Contains(r.stderr, "err-1\n") {
			t.Errorf("exec: %s; want exit 7, out-42 on stdout, err-1 on stderr", r)
		}
		r = k.run("", "exec", name, "-c", "logger", "--", "true")
		if r.code != 0 || r.stdout != "" {
			t.Errorf("exec true: %s", r)
		}
	})

	t.Run("exec -i", func(t *testing.T) {
		in := "first\nsecond\n"
		r := k.run(in, "exec", "-i", name, "-c", "logger", "--", "sh", "-c", "cat; exit 4")
		if r.code != 4 || r.stdout != in {
			t.Errorf("exec -i cat: %s; want stdin echoed and exit 4", r)
		}
	})

	t.Run("exec -it under a terminal", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := k.command(ctx, "exec", "-it", name, "-c", "logger", "--",
			"sh", "-c", `test -t 0 && test -t 1 && echo "tty-$((6*7))"; read x; echo "got-$x"; exit 5`)
		term, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
		if err != nil {
			t.Fatal(err)
		}
		defer term.Close()
		out := &lineWaiter{want: "tty-42", found: make(chan struct{})}
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			_, _ = io.Copy(out, term) // ends with EIO once kubectl exits
		}()
		select {
		case <-out.found:
		case <-ctx.Done():
			t.Fatalf("the command saw no terminal: %q", out.text())
		}
		if _, err := io.WriteString(term, "abc\r"); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		<-copied
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 5 {
			t.Errorf("exec -it: %v, want exit 5; output %q", err, out.text())
		}
		if !strings.Contains(out.text(), "got-abc") {
			t.Errorf("exec -it output %q: the line typed did not reach the command", out.text())
		}
	})

	t.Run("attach -i", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := k.command(ctx, "attach", "-i", name, "-c", "reader")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out := &lineWaiter{want: "got ping-42", found: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Sent until the reader answers: kubectl may still be connecting.
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-out.found:
				break wait
			case <-tick.C:
				_, _ = io.WriteString(stdin, "ping-42\n")
			case <-ctx.Done():
				break wait
			}
		}
		cancel()
		_ = cmd.Wait()
		if !strings.Contains(out.text(), "got ping-42") {
			t.Errorf("attach -i: the main process's answer did not come back: %q", out.text())
		}
	})

	t.Run("port-forward moves 1 MiB each way", func(t *testing.T) {
		local := k.portForward(t, name, echoPort)
		conn, err := net.DialTimeout("tcp", local, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		payload := make([]byte, 1<<20)
		if _, err := rand.Read(payload); err != nil {
			t.Fatal(err)
		}
		sent := make(chan error, 1)
		go func() {
			_, err := conn.Write(payload)
			sent <- err
		}()
		got := make([]byte, len(payload))
		n, err := io.ReadFull(conn, got)
		if err != nil {
			t.Fatalf("read %d bytes of the echo: %v", n, err)
		}
		if err := <-sent; err != nil {
			t.Fatalf("sending: %v", err)
		}
		if !bytes.Equal(got, payload) {
			t.Error("the echo differs from what was sent")
		}
	})

	t.Run("get --raw stats/summary through nodes/proxy", func(t *testing.T) {
		r := k.run("", "get", "--raw", "/api/v1/nodes/"+h.node+"/proxy/stats/summary")
		if r.code != 0 {
			t.Fatalf("get --raw: %s", r)
		}
		var sum statsv1alpha1.Summary
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
			t.Fatalf("the summary: %v\n%s", err, r.stdout)
		}
		if sum.Node.NodeName != h.node || sum.Node.CPU == nil || sum.Node.Memory == nil {
			t.Errorf("node stats: %s", r.stdout)
		}
		if !slices.ContainsFunc(sum.Pods, func(p statsv1alpha1.PodStats) bool { return p.PodRef.UID == string(created.UID) }) {
			t.Errorf("no stats of pod %s: %s", created.UID, r.stdout)
		}
	})

	t.Run("get --raw the node's system logs", func(t *testing.T) {
		r := k.run("", "get", "--raw", "/api/v1/nodes/"+h.node+"/proxy/logs/")
		if r.code != 0 || !strings.Contains(r.stdout, "<a href=") {
			t.Fatalf("the /var/log listing: %s", r)
		}
		// kubectl prints "BadRequest" alone for a body that is not a
		// Status; the node's words are read through the apiserver.
		query := "/api/v1/nodes/" + h.node + "/proxy/logs/?query=kubelet"
		if r = k.run("", "get", "--raw", query); r.code == 0 || !strings.Contains(r.stderr, "BadRequest") {
			t.Errorf("a node log query: %s; want BadRequest", r)
		}
		if code, body := rawGet(t, env.APIServerURL+query); code != http.StatusBadRequest || !strings.Contains(body, "NodeLogQuery") {
			t.Errorf("a node log query through the apiserver: %d %q, want 400 naming NodeLogQuery", code, body)
		}
	})

	nodeLogOnly(t, "https://"+net.JoinHostPort(kubectlNodeIP, portStr), name)
}

// lineNumber is N of "line N", or -1.
func lineNumber(l string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(l, "line "))
	if err != nil {
		return -1
	}
	return n
}

// kubectl runs the pinned kubectl with one kubeconfig.
type kubectl struct {
	bin, kubeconfig string
}

func newKubectl(t *testing.T, kubeconfig string) *kubectl {
	t.Helper()
	if _, err := os.Stat(env.KubectlBin); err != nil {
		t.Fatalf("kubectl (hack/controlplane-build.sh kubectl): %v", err)
	}
	return &kubectl{bin: env.KubectlBin, kubeconfig: kubeconfig}
}

// command is kubectl with args, its configuration this kubeconfig alone.
func (k *kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig=" + k.kubeconfig, "--namespace=default"}, args...)...) // #nosec G204 -- the test's own kubectl
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "KUBECONFIG=") }), "HOME="+os.TempDir())
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// kubectlResult is what a kubectl run printed and its exit code.
type kubectlResult struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r kubectlResult) String() string {
	return fmt.Sprintf("kubectl %s: exit %d, stdout %q, stderr %q", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// run runs kubectl to its end (at most a minute) with stdin.
func (k *kubectl) run(stdin string, args ...string) kubectlResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := kubectlResult{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, r.stderr+err.Error()
	}
	return r
}

var forwardingFrom = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForward runs kubectl port-forward to the pod's port until the test
// ends, and returns the local address it listens on.
func (k *kubectl) portForward(t *testing.T, pod, podPort string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := k.command(ctx, "port-forward", "--address=127.0.0.1", "pod/"+pod, ":"+podPort)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lineWaiter{found: make(chan struct{})} // a buffer safe to read while kubectl writes
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwardingFrom.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p := <-found:
		return net.JoinHostPort("127.0.0.1", p)
	case <-time.After(20 * time.Second):
		t.Fatalf("kubectl port-forward: no local port in 20 s; stderr %q", stderr.text())
	}
	return ""
}

// nodeAddressUp puts ip/32 on lo until the test ends, as
// hack/cluster-node.sh does for its node: the apiserver's nodes/proxy
// refuses a loopback node address.
func nodeAddressUp(t *testing.T, ip string) {
	t.Helper()
	if out, err := exec.Command("ip", "addr", "replace", ip+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("adding %s to lo: %v: %s", ip, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").CombinedOutput(); err != nil {
			t.Errorf("removing %s from lo: %v: %s", ip, err, out)
		}
	})
}

// text is what was written so far.
func (l *lineWaiter) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
