package runtime

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunningContainers lists the IDs of the running containers of the
// agent's pods.
func (r *Runtime) RunningContainers(ctx context.Context) ([]string, error) {
	running, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	})
	if err != nil {
		return nil, fmt.Errorf("listing the running containers: %w", err)
	}
	ids := make([]string, 0, len(running))
	for _, c := range running {
		if id, ok := identityOf(c.GetLabels()); ok && id.container != "" {
			ids = append(ids, c.GetId())
		}
	}
	return ids, nil
}

// ContainerLogPath is the file the container writes its log to, as the
// runtime reports it ("" if none).
func (r *Runtime) ContainerLogPath(ctx context.Context, id string) (string, error) {
	resp, err := r.rt.ContainerStatus(ctx, id, false)
	if err != nil {
		return "", fmt.Errorf("container %s: status: %w", id, err)
	}
	return resp.GetStatus().GetLogPath(), nil
}

// ReopenContainerLog asks the runtime to write the container's log to a
// new file at its log path, after the old one was renamed away.
func (r *Runtime) ReopenContainerLog(ctx context.Context, id string) error {
	if err := r.rt.ReopenContainerLog(ctx, id); err != nil {
		return fmt.Errorf("container %s: reopening its log: %w", id, err)
	}
	return nil
}

func (c *remoteCRI) ReopenContainerLog(ctx context.Context, id string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	_, err := c.rt.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
	return err
}
