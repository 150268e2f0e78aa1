package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"k8s.io/klog/v2"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// agentProbeTimeout bounds the first call to the local API, which tells
// whether the agent runs.
const agentProbeTimeout = 3 * time.Second

// connect returns a client of the running agent, or nil and the reason
// when the agent does not answer. Commands that can work on the directory
// alone go on without it, after saying so.
func connect(ctx context.Context, socket string) (*localapi.Client, error) {
	klog.V(6).InfoS("Calling the agent's local API", "socket", socket)
	c, err := localapi.Dial(socket)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no local API socket at %s", socket)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, agentProbeTimeout)
	defer cancel()
	h, err := c.Health(ctx)
	if err != nil {
		c.Close()
		klog.V(6).InfoS("The agent does not answer", "socket", socket, "err", err)
		return nil, err
	}
	klog.V(6).InfoS("The agent answers", "socket", socket, "ready", h.Ready)
	return c, nil
}

// sayOffline tells the operator, once, on stderr, that the agent is not
// running and what the command does instead.
func sayOffline(w io.Writer, why error, instead string) {
	fmt.Fprintf(w, "nodeagent is not running (%v): %s\n", why, instead)
}
