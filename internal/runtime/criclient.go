package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMessageSize bounds a CRI answer; a node with thousands of containers
// lists more than gRPC's default 4 MiB.
const maxMessageSize = 16 << 20

// remoteCRI is a CRI v1 client over a unix socket. Every call but a pull
// is bounded by timeout.
type remoteCRI struct {
	conn    *grpc.ClientConn
	rt      runtimeapi.RuntimeServiceClient
	img     runtimeapi.ImageServiceClient
	timeout time.Duration
}

// socketPath accepts "unix:///path" or a bare path.
func socketPath(endpoint string) (string, error) {
	path, found := strings.CutPrefix(endpoint, "unix://")
	if !found && strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("CRI endpoint %q: only unix sockets are supported", endpoint)
	}
	if path == "" {
		return "", fmt.Errorf("CRI endpoint %q has no socket path", endpoint)
	}
	return path, nil
}

// dialCRI connects to the endpoint and checks within connectTimeout that a
// CRI v1 runtime answers there. Errors name the endpoint and match
// ErrRuntimeUnavailable or ErrNotCRIv1.
func dialCRI(ctx context.Context, endpoint string, connectTimeout, requestTimeout time.Duration, intercept grpc.UnaryClientInterceptor) (*remoteCRI, *runtimeapi.VersionResponse, error) {
	path, err := socketPath(endpoint)
	if err != nil {
		return nil, nil, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("CRI endpoint %s: socket does not exist: %w", endpoint, ErrRuntimeUnavailable)
	case err != nil:
		return nil, nil, fmt.Errorf("CRI endpoint %s: %w: %w", endpoint, ErrRuntimeUnavailable, err)
	case fi.Mode()&os.ModeSocket == 0:
		return nil, nil, fmt.Errorf("CRI endpoint %s: %s is not a socket: %w", endpoint, path, ErrRuntimeUnavailable)
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize),
			grpc.ForceCodecV2(criCodec{})),
		experimental.WithBufferPool(criBufferPool),
		grpc.WithUnaryInterceptor(intercept))
	if err != nil {
		return nil, nil, fmt.Errorf("CRI endpoint %s: %w: %w", endpoint, ErrRuntimeUnavailable, err)
	}
	c := &remoteCRI{conn: conn, rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn), timeout: requestTimeout}
	vctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	v, err := c.rt.Version(vctx, &runtimeapi.VersionRequest{Version: "v1"})
	if err != nil {
		_ = conn.Close() // the Version error is the one to report
		return nil, nil, classifyVersionError(endpoint, path, connectTimeout, err)
	}
	return c, v, nil
}

// classifyVersionError tells a runtime that is not there from something
// there that does not speak CRI v1.
func classifyVersionError(endpoint, path string, timeout time.Duration, err error) error {
	if grpcstatus.Code(err) == codes.Unimplemented {
		return fmt.Errorf("CRI endpoint %s: the runtime.v1 API is not served (%v): %w", endpoint, grpcstatus.Convert(err).Message(), ErrNotCRIv1)
	}
	probe, dialErr := net.DialTimeout("unix", path, time.Second)
	if dialErr != nil {
		return fmt.Errorf("CRI endpoint %s: nothing accepts connections (%v): %w", endpoint, dialErr, ErrRuntimeUnavailable)
	}
	_ = probe.Close() // it accepted: that is all the probe asked
	if grpcstatus.Code(err) == codes.DeadlineExceeded {
		return fmt.Errorf("CRI endpoint %s: no answer to Version within %s: %w", endpoint, timeout, ErrRuntimeUnavailable)
	}
	return fmt.Errorf("CRI endpoint %s: accepts connections but does not answer as a CRI v1 gRPC server (%v): %w", endpoint, err, ErrNotCRIv1)
}

func (c *remoteCRI) close() error { return c.conn.Close() }

func (c *remoteCRI) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

func (c *remoteCRI) Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.Version(ctx, &runtimeapi.VersionRequest{Version: apiVersion})
}

func (c *remoteCRI) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.Status(ctx, &runtimeapi.StatusRequest{Verbose: verbose})
}

func (c *remoteCRI) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config, RuntimeHandler: handler})
	return resp.GetPodSandboxId(), err
}

func (c *remoteCRI) StopPodSandbox(ctx context.Context, id string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return err
}

func (c *remoteCRI) RemovePodSandbox(ctx context.Context, id string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

func (c *remoteCRI) PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
}

func (c *remoteCRI) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	return resp.GetItems(), err
}

func (c *remoteCRI) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: config, SandboxConfig: sandboxConfig})
	return resp.GetContainerId(), err
}

func (c *remoteCRI) StartContainer(ctx context.Context, id string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

func (c *remoteCRI) UpdateContainerResources(ctx context.Context, id string, r *runtimeapi.ContainerResources) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: r.GetLinux(), Windows: r.GetWindows()})
	return err
}

// StopContainer may take the whole grace period, so its bound is the
// grace period plus the usual request timeout.
func (c *remoteCRI) StopContainer(ctx context.Context, id string, timeout int64) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout+time.Duration(timeout)*time.Second)
	defer cancel()
	_, err := c.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
	return err
}

func (c *remoteCRI) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	return err
}

func (c *remoteCRI) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	return resp.GetContainers(), err
}

func (c *remoteCRI) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: verbose})
}

func (c *remoteCRI) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: image, Verbose: verbose})
}

// PullImage is bounded only by ctx: a large image may take long.
func (c *remoteCRI) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := c.img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: image, Auth: auth, SandboxConfig: sandboxConfig})
	return resp.GetImageRef(), err
}

func (c *remoteCRI) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.img.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
}

func (c *remoteCRI) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	resp, err := c.img.ListImages(ctx, &runtimeapi.ListImagesRequest{Filter: filter})
	return resp.GetImages(), err
}

func (c *remoteCRI) RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.img.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: image})
	return err
}
