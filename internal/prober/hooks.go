package prober

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// ErrHookFailed is the error of a lifecycle hook whose action failed or
// did not end in time.
var ErrHookFailed = errors.New("lifecycle hook failed")

// RunHook runs a container's lifecycle hook action (exec, httpGet or
// sleep) against the instance containerID and waits for it at most
// timeout. The actions share the probes' handlers: an exec must exit 0, an
// httpGet must answer 200 to 399; a sleep sleeps, cut short by timeout.
// A tcpSocket action, deprecated and never run by the kubelet, is refused.
func (m *Manager) RunHook(ctx context.Context, h *corev1.LifecycleHandler, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, timeout time.Duration) error {
	if timeout <= 0 {
		return fmt.Errorf("%w: no time left to run it", ErrHookFailed)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := target{container: c.Name, containerID: containerID, ports: c.Ports, hostNetwork: pod.Spec.HostNetwork}
	host := podIP
	if host == "" && t.hostNetwork {
		host = "127.0.0.1"
	}
	var r Result
	var msg string
	switch {
	case h.Exec != nil:
		r, msg = m.probeExec(ctx, h.Exec, t, timeout)
	case h.HTTPGet != nil:
		r, msg = probeHTTP(ctx, h.HTTPGet, t, host, timeout)
	case h.Sleep != nil:
		return sleep(ctx, m.clock, time.Duration(h.Sleep.Seconds)*time.Second)
	default:
		return fmt.Errorf("%w: the hook has no exec, httpGet or sleep action", ErrHookFailed)
	}
	if r != Success && r != successWithWarning {
		return fmt.Errorf("%w: %s", ErrHookFailed, msg)
	}
	return nil
}

// sleep waits d, or until ctx ends: a sleep cut short by the grace period
// is not a failure.
func sleep(ctx context.Context, c clock.WithTicker, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
	return nil
}
