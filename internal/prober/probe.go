package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// maxOutput bounds what a probe's output or response body contributes to
// its message: enough to say why, never a container's whole log.
const maxOutput = 10 << 10

// Execer runs a command in a container; *runtime.Runtime satisfies it.
type Execer interface {
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (runtime.ExecResult, error)
}

// target is what one worker probes.
type target struct {
	container   string
	containerID string
	ports       []corev1.ContainerPort
	hostNetwork bool
}

// probe runs p once against t, bounded by its timeout, and returns the
// outcome with a message saying why (output, status, error).
func (m *Manager) probe(ctx context.Context, p *corev1.Probe, t target, podIP string) (Result, string) {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	host := podIP
	if host == "" && t.hostNetwork {
		host = "127.0.0.1" // the host's own network: its loopback reaches the container
	}
	switch {
	case p.Exec != nil:
		return m.probeExec(ctx, p.Exec, t, timeout)
	case p.HTTPGet != nil:
		return probeHTTP(ctx, p.HTTPGet, t, host, timeout)
	case p.TCPSocket != nil:
		if p.TCPSocket.Host != "" {
			host = p.TCPSocket.Host
		}
		return probeTCP(ctx, p.TCPSocket.Port, t, host, timeout)
	case p.GRPC != nil:
		return probeGRPC(ctx, p.GRPC, host, timeout)
	}
	return Failure, "the probe has no handler (exec, httpGet, tcpSocket or grpc)"
}

func (m *Manager) probeExec(ctx context.Context, a *corev1.ExecAction, t target, timeout time.Duration) (Result, string) {
	if len(a.Command) == 0 {
		return Failure, "exec probe without a command"
	}
	res, err := m.exec.ExecSync(ctx, t.containerID, a.Command, timeout)
	out := bounded(append(res.Stdout, res.Stderr...))
	switch {
	case errors.Is(err, runtime.ErrExecTimeout):
		return Failure, fmt.Sprintf("command timed out after %s", timeout)
	case err != nil:
		return Failure, err.Error()
	case res.ExitCode != 0:
		return Failure, fmt.Sprintf("command exited with code %d: %s", res.ExitCode, out)
	}
	return Success, out
}

func probeTCP(ctx context.Context, port intstr.IntOrString, t target, host string, timeout time.Duration) (Result, string) {
	n, err := resolvePort(port, t.ports)
	if err != nil {
		return Failure, err.Error()
	}
	if host == "" {
		return Failure, "the pod has no IP yet"
	}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(n)))
	if err != nil {
		return Failure, err.Error()
	}
	_ = conn.Close() // the connection was all the probe asked for
	return Success, ""
}

// resolvePort turns a numbered or named port into its number, a name
// through the container's ports.
func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("port %d is out of range", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil && n > 0 && n <= 65535 {
		return n, nil
	}
	return 0, fmt.Errorf("the container has no port named %q", p.StrVal)
}

func bounded(b []byte) string {
	if len(b) > maxOutput {
		return string(b[:maxOutput]) + " [truncated]"
	}
	return string(b)
}
