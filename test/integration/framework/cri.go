package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CRI is a connection to containerd's CRI services.
type CRI struct {
	Runtime runtimeapi.RuntimeServiceClient
	Images  runtimeapi.ImageServiceClient
	conn    *grpc.ClientConn
}

// Close closes the connection.
func (c *CRI) Close() error { return c.conn.Close() }

// DialCRI connects to the environment's CRI socket.
func (e *Env) DialCRI() (*CRI, error) { return dialCRI(e.CRIEndpoint) }

func dialCRI(endpoint string) (*CRI, error) {
	conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(endpoint, "unix://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("CRI %s: %w", endpoint, err)
	}
	return &CRI{Runtime: runtimeapi.NewRuntimeServiceClient(conn), Images: runtimeapi.NewImageServiceClient(conn), conn: conn}, nil
}

// CRI returns a connection closed when the test ends.
func (e *Env) CRI(t testing.TB) *CRI {
	t.Helper()
	c, err := e.DialCRI()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkRuntimeEmpty fails if any pod sandbox or container is left in
// containerd: every test must clean up what it started.
func (e *Env) checkRuntimeEmpty(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := e.DialCRI()
	if err != nil {
		return err
	}
	defer c.Close()
	sandboxes, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing pod sandboxes: %w", err)
	}
	containers, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return fmt.Errorf("listing containers: %w", err)
	}
	if n, m := len(sandboxes.Items), len(containers.Containers); n > 0 || m > 0 {
		var names []string
		for _, s := range sandboxes.Items {
			names = append(names, "sandbox "+s.GetMetadata().GetName())
		}
		for _, c := range containers.Containers {
			names = append(names, "container "+c.GetMetadata().GetName())
		}
		return fmt.Errorf("containerd still holds %d sandbox(es) and %d container(s): %s", n, m, strings.Join(names, ", "))
	}
	return nil
}
