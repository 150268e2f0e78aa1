package runtime

import (
	"context"
	"fmt"
	"io"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/logs"
)

// ReadLogs writes the log of the container id to stdout and stderr (the
// same writer for both keeps their order), as opts select it: the runtime's log file (its path from the
// container's status) read by cri-client's reader, the kubelet's own.
// With opts.Follow it returns once the container has stopped and its log
// is read to the end, or when ctx ends.
func (r *Runtime) ReadLogs(ctx context.Context, id string, opts *logs.LogOptions, stdout, stderr io.Writer) error {
	resp, err := r.rt.ContainerStatus(ctx, id, false)
	if err != nil {
		return fmt.Errorf("container %s: status: %w", id, err)
	}
	path := resp.GetStatus().GetLogPath()
	if path == "" {
		return fmt.Errorf("container %s: the runtime reports no log path", id)
	}
	if err := logs.ReadLogs(ctx, path, id, opts, statusOnly{rt: r.rt}, stdout, stderr); err != nil {
		return fmt.Errorf("container %s: reading its log: %w", id, err)
	}
	return nil
}

// statusOnly gives cri-client's log reader the one call it makes, whether
// a followed container still runs. The embedded interface is nil: any
// other method would panic, and the reader calls none.
type statusOnly struct {
	internalapi.RuntimeService
	rt criRuntime
}

func (s statusOnly) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	return s.rt.ContainerStatus(ctx, id, verbose)
}
