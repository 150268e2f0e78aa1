package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// ErrExecTimeout: a command run by ExecSync did not end within its timeout.
var ErrExecTimeout = errors.New("command timed out")

// ExecResult is what a command run in a container left.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// ExecSync runs cmd in the running container id and waits for it at most
// timeout (whole seconds, at least one: the CRI's resolution). A command
// that ran and exited, whatever its code, is a result; the error is for a
// command that could not run or did not end in time (ErrExecTimeout).
func (r *Runtime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (ExecResult, error) {
	stdout, stderr, err := r.rt.ExecSync(ctx, id, cmd, timeout)
	res := ExecResult{Stdout: stdout, Stderr: stderr}
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitStatus()
		return res, nil
	case grpcstatus.Code(err) == codes.DeadlineExceeded, errors.Is(err, context.DeadlineExceeded),
		// containerd reports its own timeout of the exec as an unknown error.
		strings.Contains(err.Error(), "deadline exceeded"):
		return res, fmt.Errorf("container %s: %w after %s", id, ErrExecTimeout, timeout)
	}
	return res, fmt.Errorf("container %s: exec: %w", id, err)
}

// StopContainer stops one container, giving it grace seconds between the
// stop signal and the kill. It is how a container is killed alone, as a
// failed liveness probe asks; what restarts it is the next SyncPod.
func (r *Runtime) StopContainer(ctx context.Context, id string, grace int64) error {
	if err := r.rt.StopContainer(ctx, id, max(grace, 0)); err != nil && !isNotFound(err) {
		return fmt.Errorf("stopping container %s: %w", id, err)
	}
	return nil
}

// ExecSync runs the command with the CRI's timeout, in whole seconds
// rounded up, and bounds the call itself a little beyond it, so that a
// runtime that does not honour the timeout cannot hold the caller.
func (c *remoteCRI) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	secs := int64((timeout + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+c.timeout)
	defer cancel()
	resp, err := c.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: secs})
	if err != nil {
		return nil, nil, err
	}
	if code := resp.GetExitCode(); code != 0 {
		return resp.GetStdout(), resp.GetStderr(), utilexec.CodeExitError{Err: fmt.Errorf("command exited with code %d", code), Code: int(code)}
	}
	return resp.GetStdout(), resp.GetStderr(), nil
}
