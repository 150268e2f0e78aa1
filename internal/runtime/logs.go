package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
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

// ReadRemovedLogs writes the log a container left in its pod's log
// directory after the runtime removed it, as ReadLogs does: the agent
// removes a finished pod's containers when it terminates, but keeps its
// logs for as long as the pod is listed, and the kubelet serves a finished
// pod's logs until the pod is deleted. The newest instance's log is read,
// or with previous the one before it; ErrNoLog if there is none.
func (r *Runtime) ReadRemovedLogs(ctx context.Context, pod *corev1.Pod, container string, previous bool, opts *logs.LogOptions, stdout, stderr io.Writer) error {
	if errs := validation.IsDNS1123Label(container); len(errs) > 0 {
		return fmt.Errorf("container %q: %s: %w", container, strings.Join(errs, "; "), ErrNoLog)
	}
	dirName, err := podLogDirName(pod.Namespace, pod.Name, pod.UID)
	if err != nil {
		return err
	}
	dir := filepath.Join(r.opts.LogRoot, dirName, container)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("container %q: %w", container, err)
	}
	// Each instance logs to <restart count>.log: newest first.
	var counts []int
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log"))
		if err == nil && n >= 0 && e.Name() == strconv.Itoa(n)+".log" && e.Type().IsRegular() {
			counts = append(counts, n)
		}
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	i := 0
	if previous {
		i = 1
	}
	if len(counts) <= i {
		return fmt.Errorf("container %q of pod %s/%s: %w", container, pod.Namespace, pod.Name, ErrNoLog)
	}
	path := filepath.Join(dir, strconv.Itoa(counts[i])+".log")
	if err := logs.ReadLogs(ctx, path, "", opts, removed{}, stdout, stderr); err != nil {
		return fmt.Errorf("container %q of pod %s/%s: reading its log: %w", container, pod.Namespace, pod.Name, err)
	}
	return nil
}

// removed answers cri-client's log reader for a container the runtime no
// longer holds: it has exited, so a follow ends at the end of its log.
type removed struct {
	internalapi.RuntimeService
}

func (removed) ContainerStatus(context.Context, string, bool) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED}}, nil
}
