package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ensureImage returns the container's image as the runtime holds it (its
// ID and user), pulling it only if it is absent and the pull policy allows;
// pulled says it did.
//
// Unlike the kubelet, policy Always does not pull an image that is already
// present: the agent runs offline-first (a node may have no registry), and
// refreshing images is left to an image manager.
func (r *Runtime) ensureImage(ctx context.Context, c *corev1.Container, sandbox *runtimeapi.PodSandboxConfig) (img *runtimeapi.Image, pulled bool, err error) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	resp, err := r.img.ImageStatus(ctx, spec, false)
	if err != nil {
		return nil, false, fmt.Errorf("image %q: status: %w", c.Image, err)
	}
	if found := resp.GetImage(); found.GetId() != "" {
		return found, false, nil
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return nil, false, fmt.Errorf("image %q not present and pull policy is Never: %w", c.Image, ErrImageNeverPull)
	}
	r.log.V(1).Info("pulling image", "image", c.Image)
	ref, err := r.img.PullImage(ctx, spec, nil, sandbox)
	if err != nil {
		return nil, false, fmt.Errorf("image %q not present: %w: %w", c.Image, ErrImagePull, err)
	}
	// The pull answers with a reference only; the user is in the status.
	resp, err = r.img.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref, UserSpecifiedImage: c.Image}, false)
	if err != nil {
		return nil, false, fmt.Errorf("image %q: status after the pull: %w", c.Image, err)
	}
	if resp.GetImage().GetId() == "" {
		return nil, false, fmt.Errorf("image %q: pulled as %s, but the runtime does not list it", c.Image, ref)
	}
	return resp.GetImage(), true, nil
}
