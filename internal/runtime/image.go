package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ImagePull says how a container's image was had: Pulled, or found
// present. Image is the reference as pulled (a default tag added).
type ImagePull struct {
	Image  string
	Pulled bool
	// Duration is how long the pull took; Size is the image's, in bytes.
	Duration time.Duration
	Size     uint64
}

// ensureImage returns the container's image as the runtime holds it (its
// ID and user), pulling it as the pull policy says, as the kubelet does:
// Always pulls each time a container starts (the runtime resolves the
// tag against the registry and fetches only what it lacks), IfNotPresent
// and Never use a present image. A container without a policy gets the
// default of its reference. With Options.ImagePullAlwaysIfAbsent, Always
// acts as IfNotPresent (offline-first nodes).
//
// A present image that the agent pulled with a pod's secret is used only
// by pods that hold the same credentials (or secret); others pull it
// themselves (Options.PullRecords).
//
// Pulls use the credentials of the pod's imagePullSecrets, then the
// node's, that match the image's repository, each in turn until one pull
// succeeds; a failed pull backs off, per pod and image. Pulls wait their
// turn, and containers asking for one image at once share its pull
// (pullQueue). pulling, if not nil, is called just before a pull. Errors
// are *ImageError.
func (r *Runtime) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandbox *runtimeapi.PodSandboxConfig, pulling func(image string)) (*runtimeapi.Image, ImagePull, error) {
	ref, err := images.ParseReference(c.Image)
	if err != nil {
		return nil, ImagePull{}, &ImageError{Reason: ErrInvalidImageName, Image: c.Image, Err: err,
			Message: fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err)}
	}
	info := ImagePull{Image: ref.Image}
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = ref.DefaultPullPolicy()
	}
	if policy == corev1.PullAlways && r.opts.ImagePullAlwaysIfAbsent {
		policy = corev1.PullIfNotPresent
	}
	spec := &runtimeapi.ImageSpec{Image: ref.Image, UserSpecifiedImage: c.Image}
	if policy != corev1.PullAlways {
		resp, err := r.img.ImageStatus(ctx, spec, false)
		if err != nil {
			return nil, info, &ImageError{Reason: ErrImagePull, Image: c.Image, Err: err,
				Message: fmt.Sprintf("Failed to inspect image %q: %v", c.Image, err)}
		}
		found := resp.GetImage()
		switch {
		case found.GetId() != "" && !r.mustVerifyPull(ctx, pod, ref, found.GetId()):
			return found, info, nil
		case found.GetId() != "":
			// Present, but pulled with credentials the pod is not known
			// to hold: it pulls it itself, and the registry decides.
			r.log.V(1).Info("image present, but the pod must show its right to it: pulling", "image", ref.Image, "pod", pod.Namespace+"/"+pod.Name)
		}
		if policy == corev1.PullNever {
			return nil, info, &ImageError{Reason: ErrImageNeverPull, Image: c.Image,
				Message: fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)}
		}
	}

	key := pullBackoffKey(pod.UID, ref.Image)
	if waiting, last := r.pullBackoff.wait(key); waiting {
		return nil, info, &ImageError{Reason: ErrImagePullBackOff, Image: c.Image,
			Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", c.Image, last)}
	}
	auths, err := r.pullCredentials(ctx, pod, ref.Repository)
	if err != nil {
		r.pullBackoff.failed(key, err.Error())
		return nil, info, &ImageError{Reason: ErrImagePull, Image: c.Image, Err: err, Message: err.Error()}
	}
	if pulling != nil {
		pulling(c.Image)
	}
	r.log.V(1).Info("pulling image", "image", ref.Image, "credentials", len(auths), "policy", policy)
	start := r.clock.Now()
	imageRef, err := r.pulls.pull(ctx, pullKey(ref.Image, auths), func(ctx context.Context) (string, error) {
		records := r.opts.PullRecords
		if records == nil {
			id, _, err := r.pull(ctx, spec, auths, sandbox)
			return id, err
		}
		defer records.Pulling(ref.Image)()
		id, used, err := r.pull(ctx, spec, auths, sandbox)
		if err == nil {
			if err := records.Pulled(ref.Repository, id, used); err != nil {
				r.log.Error(err, "Recording the credentials of an image pull", "image", ref.Image)
			}
		}
		return id, err
	})
	if err != nil {
		r.pullBackoff.failed(key, err.Error())
		return nil, info, &ImageError{Reason: ErrImagePull, Image: c.Image, Err: err, Message: err.Error()}
	}
	info.Pulled, info.Duration = true, r.clock.Since(start)
	// The pull answers with a reference only; the user is in the status.
	resp, err := r.img.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image}, false)
	if err != nil {
		return nil, info, &ImageError{Reason: ErrImagePull, Image: c.Image, Err: err,
			Message: fmt.Sprintf("image %q: status after the pull: %v", c.Image, err)}
	}
	if resp.GetImage().GetId() == "" {
		return nil, info, &ImageError{Reason: ErrImagePull, Image: c.Image,
			Message: fmt.Sprintf("image %q: pulled as %s, but the runtime does not list it", c.Image, imageRef)}
	}
	info.Size = resp.GetImage().GetSize()
	return resp.GetImage(), info, nil
}

// pull pulls with each set of credentials in turn until one succeeds;
// without any, anonymously. It returns the image's reference and the
// credentials that pulled it (nil: none).
func (r *Runtime) pull(ctx context.Context, spec *runtimeapi.ImageSpec, auths []images.AuthConfig, sandbox *runtimeapi.PodSandboxConfig) (string, *images.AuthConfig, error) {
	if len(auths) == 0 {
		ref, err := r.img.PullImage(ctx, spec, nil, sandbox)
		return ref, nil, err
	}
	var errs []error
	for i, a := range auths {
		ref, err := r.img.PullImage(ctx, spec, &runtimeapi.AuthConfig{Username: a.Username, Password: a.Password}, sandbox)
		if err == nil {
			return ref, &auths[i], nil
		}
		errs = append(errs, err)
	}
	return "", nil, errors.Join(errs...)
}

// secretCredentials are the credentials of the pod's imagePullSecrets for
// repository, read through Options.Sources; none for a static pod.
func (r *Runtime) secretCredentials(ctx context.Context, pod *corev1.Pod, repository string) ([]images.AuthConfig, error) {
	if len(pod.Spec.ImagePullSecrets) == 0 || r.opts.Sources == nil || podtypes.IsStaticPod(pod) {
		return nil, nil
	}
	var secrets []*corev1.Secret
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := r.opts.Sources.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			r.log.Info("Unable to read an image pull secret; the pull may fail", "pod", pod.Namespace+"/"+pod.Name, "secret", ref.Name, "err", err)
			continue
		}
		secrets = append(secrets, s)
	}
	kr, err := images.KeyringFromSecrets(secrets)
	if err != nil {
		return nil, fmt.Errorf("image pull secrets: %w", err)
	}
	return kr.Lookup(repository), nil
}

// mustVerifyPull reports whether the pod must pull a present image itself
// (Options.PullRecords: the kubelet's ensure-secret-pulled-images rule):
// the agent pulled it with credentials the pod's pull secrets do not
// hold. A pod's secrets that cannot be read count as none.
func (r *Runtime) mustVerifyPull(ctx context.Context, pod *corev1.Pod, ref images.Reference, imageID string) bool {
	records := r.opts.PullRecords
	if records == nil {
		return false
	}
	// Only the pod's secrets count, and only when the record asks: the
	// node's docker config and its plugins are not consulted at every
	// start of a present image.
	held := func() []images.SecretCredential {
		auths, _ := r.secretCredentials(ctx, pod, ref.Repository)
		out := make([]images.SecretCredential, 0, len(auths))
		for _, a := range auths {
			out = append(out, images.SecretCredential{Namespace: a.Secret.Namespace, Name: a.Secret.Name, UID: a.Secret.UID, Hash: images.HashCredentials(a)})
		}
		return out
	}
	return records.MustPull(ref.Image, ref.Repository, imageID, held)
}

// pullCredentials are the credentials for repository: those of the pod's
// imagePullSecrets, read through Options.Sources (with the node's
// identity), then the node's own (Options.NodeDockerConfigPaths), then
// the credential provider plugins' (Options.CredentialProviders), as the
// kubelet orders them. A secret that cannot be read is skipped, as the
// kubelet skips it: the pull may still succeed without it, and fails as a
// pull if not; a docker config that does not parse fails the pull; a
// plugin that fails gives nothing (logged). Static pods have no pull
// secrets (their sources refuse them): they get the node's credentials
// only, the docker config's and the plugins'.
func (r *Runtime) pullCredentials(ctx context.Context, pod *corev1.Pod, repository string) ([]images.AuthConfig, error) {
	out, err := r.secretCredentials(ctx, pod, repository)
	if err != nil {
		return nil, err
	}
	if len(r.opts.NodeDockerConfigPaths) > 0 {
		// Read at each pull (pulls are rare): a changed file counts at once.
		kr, err := images.KeyringFromFiles(r.opts.NodeDockerConfigPaths)
		if err != nil {
			return nil, fmt.Errorf("the node's docker config: %w", err)
		}
		out = append(out, kr.Lookup(repository)...)
	}
	return append(out, r.opts.CredentialProviders.Lookup(ctx, repository)...), nil
}
