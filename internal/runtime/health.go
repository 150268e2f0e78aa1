package runtime

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Health is what the runtime says of itself: whether it can run
// containers and whether pod networking works, with the runtime's own
// reason when either cannot.
type Health struct {
	RuntimeReady, NetworkReady     bool
	RuntimeProblem, NetworkProblem string
}

// Health asks the runtime for its conditions (CRI Status). A runtime that
// does not answer is an error; a condition it does not report counts as
// not ready, since nothing vouches for it.
func (r *Runtime) Health(ctx context.Context) (Health, error) {
	resp, err := r.rt.Status(ctx, false)
	if err != nil {
		return Health{}, fmt.Errorf("runtime status: %w", err)
	}
	h := Health{RuntimeProblem: "the runtime reports no RuntimeReady condition", NetworkProblem: "the runtime reports no NetworkReady condition"}
	for _, c := range resp.GetStatus().GetConditions() {
		problem := ""
		if !c.GetStatus() {
			problem = fmt.Sprintf("%s: %s", c.GetReason(), c.GetMessage())
		}
		switch c.GetType() {
		case runtimeapi.RuntimeReady:
			h.RuntimeReady, h.RuntimeProblem = c.GetStatus(), problem
		case runtimeapi.NetworkReady:
			h.NetworkReady, h.NetworkProblem = c.GetStatus(), problem
		}
	}
	return h, nil
}

// ImageFilesystems returns the mount points of the filesystems the
// runtime keeps its images and container layers on, as it reports them.
func (r *Runtime) ImageFilesystems(ctx context.Context) ([]string, error) {
	resp, err := r.img.ImageFsInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("runtime image filesystem info: %w", err)
	}
	var mounts []string
	for _, fs := range append(resp.GetImageFilesystems(), resp.GetContainerFilesystems()...) {
		if m := fs.GetFsId().GetMountpoint(); m != "" {
			mounts = append(mounts, m)
		}
	}
	return mounts, nil
}
