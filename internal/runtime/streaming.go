package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrNotRunning: a stream was asked of a container or pod that does not
// run on the node.
var ErrNotRunning = errors.New("not running")

// StreamOptions are the streams an exec or attach session carries.
type StreamOptions struct {
	Stdin, Stdout, Stderr, TTY bool
}

// RunningContainerID is the ID of the pod's running container named name
// (the newest, should the runtime hold two), or ErrNotRunning: a stream's
// lookup in one ListContainers call, the runtime filtering on the labels
// and the state, where GetPodStatus would add a status call for every
// sandbox and container of the pod (about 5 ms of an exec's round trip on
// a loaded machine, and more with more containers).
func (r *Runtime) RunningContainerID(ctx context.Context, uid types.UID, name string) (string, error) {
	cs, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{LabelPodUID: string(uid), LabelContainerName: name},
	})
	if err != nil {
		return "", fmt.Errorf("pod %s: container %s: listing: %w", uid, name, err)
	}
	var newest *runtimeapi.Container
	for _, c := range cs {
		if newest == nil || c.GetCreatedAt() > newest.GetCreatedAt() {
			newest = c
		}
	}
	if newest == nil {
		return "", fmt.Errorf("pod %s: container %s: %w", uid, name, ErrNotRunning)
	}
	return newest.GetId(), nil
}

// ExecURL asks the runtime for the URL of its streaming server that runs
// cmd in the container id and serves the command's streams. The URL is
// for one session and expires soon (containerd: 1 minute).
func (r *Runtime) ExecURL(ctx context.Context, id string, cmd []string, o StreamOptions) (*url.URL, error) {
	resp, err := r.rt.Exec(ctx, &runtimeapi.ExecRequest{
		ContainerId: id, Cmd: cmd, Tty: o.TTY, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("container %s: exec: %w", id, err)
	}
	return streamURL("exec", id, resp.GetUrl())
}

// AttachURL asks the runtime for the URL that attaches to the streams of
// the container id's main process.
func (r *Runtime) AttachURL(ctx context.Context, id string, o StreamOptions) (*url.URL, error) {
	resp, err := r.rt.Attach(ctx, &runtimeapi.AttachRequest{
		ContainerId: id, Tty: o.TTY, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("container %s: attach: %w", id, err)
	}
	return streamURL("attach", id, resp.GetUrl())
}

// PortForwardURL asks the runtime for the URL that forwards connections
// into the network namespace of the pod's newest ready sandbox. ports are
// those a WebSocket client named in its request (the runtime's streaming
// server opens their channels); an SPDY client chooses them on the
// stream, and gives none here.
func (r *Runtime) PortForwardURL(ctx context.Context, uid types.UID, ports []int32) (*url.URL, error) {
	st, err := r.GetPodStatus(ctx, uid)
	if err != nil {
		return nil, err
	}
	if len(st.Sandboxes) == 0 || st.Sandboxes[0].State != SandboxReady {
		return nil, fmt.Errorf("pod %s: no ready sandbox: %w", uid, ErrNotRunning)
	}
	id := st.Sandboxes[0].ID
	resp, err := r.rt.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: id, Port: ports})
	if err != nil {
		return nil, fmt.Errorf("pod %s: sandbox %s: port-forward: %w", uid, id, err)
	}
	return streamURL("port-forward", id, resp.GetUrl())
}

// streamURL checks the runtime's answer: an absolute http(s) URL, since
// the node API dials it.
func streamURL(what, id, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the runtime's streaming URL %q: %w", what, id, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %s: the runtime's streaming URL %q is not an absolute http(s) URL", what, id, raw)
	}
	return u, nil
}

func (c *remoteCRI) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.Exec(ctx, req)
}

func (c *remoteCRI) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.Attach(ctx, req)
}

func (c *remoteCRI) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.PortForward(ctx, req)
}
