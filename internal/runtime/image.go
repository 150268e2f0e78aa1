package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ensureImage returns the runtime's ID of the container's image, pulling
// the image only if it is absent and the pull policy allows.
//
// Unlike the kubelet, policy Always does not pull an image that is already
// present: the agent runs offline-first (a node may have no registry), and
// refreshing images is left to an image manager.
func (r *Runtime) ensureImage(ctx context.Context, c *corev1.Container, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	resp, err := r.img.ImageStatus(ctx, spec, false)
	if err != nil {
		return "", fmt.Errorf("image %q: status: %w", c.Image, err)
	}
	if id := resp.GetImage().GetId(); id != "" {
		return id, nil
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return "", fmt.Errorf("image %q not present and pull policy is Never: %w", c.Image, ErrImageNeverPull)
	}
	r.log.V(1).Info("pulling image", "image", c.Image)
	ref, err := r.img.PullImage(ctx, spec, nil, sandbox)
	if err != nil {
		return "", fmt.Errorf("image %q not present: %w: %w", c.Image, ErrImagePull, err)
	}
	return ref, nil
}
