package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/nodeidentity"
)

// connection is connected mode's link to the apiserver: the client of the
// node's own identity. That client exists only once the identity is
// loaded, and loading it may take minutes (a bootstrap waits for its CSR
// to be signed) while the static pods run. So the parts that need the
// apiserver are built and started with all the others, and each waits
// for the connection at the start of its Run (whenConnected); nothing is
// assigned to them later.
//
// The connection is resolved once, by its own Run, which then keeps the
// identity's certificate rotated until ctx ends.
type connection struct {
	o   *Options
	reg metrics.KubeRegistry
	log logr.Logger

	ready  chan struct{}        // closed once client and id are set
	client kubernetes.Interface // set once, before ready is closed
	id     *nodeidentity.Identity

	// anon is the client of readyz, made once (anonOnce), after ready.
	anonOnce sync.Once
	anon     rest.Interface
	anonErr  error
}

// connectedPart is a part that needs the apiserver: it runs with the
// node's client until ctx ends.
type connectedPart = func(context.Context, kubernetes.Interface) error

// newConnection is the connection of connected mode; nil in standalone
// mode (no --kubeconfig).
func newConnection(o *Options, reg metrics.KubeRegistry, log logr.Logger) *connection {
	if o.Kubeconfig == "" {
		return nil
	}
	return &connection{o: o, reg: reg, log: log, ready: make(chan struct{})}
}

// Run loads (or bootstraps) the node's identity, resolves the connection
// with its client, then rotates the identity's certificate until ctx
// ends. Failing to load the identity fails the agent.
func (c *connection) Run(ctx context.Context) error {
	id, err := c.o.identity(ctx, c.reg, c.log)
	if err != nil {
		return fmt.Errorf("connected mode: %w", err)
	}
	client, err := kubernetes.NewForConfig(c.o.clientConfig(id))
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", c.o.Kubeconfig, err)
	}
	c.client, c.id = client, id
	close(c.ready)
	return id.Run(ctx)
}

// closeConnections closes the client's connections, if it has been made,
// so that its next requests dial afresh (see node.Options).
func (c *connection) closeConnections() {
	select {
	case <-c.ready:
		c.id.CloseConnections()
	default:
	}
}

// readyz asks the apiserver's /readyz without credentials, as it is
// meant to be asked (system:public-info-viewer): before the apiserver is
// ready, the node's own identity may be refused (a 403) while its
// authorizer's caches fill. An apiserver that serves no anonymous
// requests never says ok here; the Node then learns of its return from
// its other requests.
func (c *connection) readyz(ctx context.Context) bool {
	rc, err := c.anonymous()
	if err != nil {
		return false
	}
	body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && string(body) == "ok"
}

// anonymous is a REST client to the apiserver with its CA and no
// credentials, made once the connection is resolved.
func (c *connection) anonymous() (rest.Interface, error) {
	select {
	case <-c.ready:
	default:
		return nil, errors.New("not connected yet")
	}
	c.anonOnce.Do(func() {
		cs, err := kubernetes.NewForConfig(rest.AnonymousClientConfig(c.o.clientConfig(c.id)))
		if err != nil {
			c.anonErr = fmt.Errorf("--kubeconfig %s: %w", c.o.Kubeconfig, err)
			return
		}
		c.anon = cs.Discovery().RESTClient()
	})
	return c.anon, c.anonErr
}

// wait returns the client once the connection is resolved, or ctx's
// error if ctx ends first.
func (c *connection) wait(ctx context.Context) (kubernetes.Interface, error) {
	select {
	case <-c.ready:
		return c.client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// whenConnected makes a connected part a Run(ctx) like every other: it
// waits for the connection, then runs the part with the client. If ctx
// ends first the part never started, and there is nothing to report.
func (c *connection) whenConnected(part connectedPart) func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := c.wait(ctx)
		if err != nil {
			return nil
		}
		return part(ctx, client)
	}
}
