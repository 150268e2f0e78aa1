package images

import (
	"fmt"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// Reference is a container's image reference, read as the kubelet reads
// it.
type Reference struct {
	// Image is the reference as pulled: the user's, with ":latest" added
	// when it names neither a tag nor a digest (the registry and
	// repository are left as written; the runtime qualifies them).
	Image string
	// Repository is the fully qualified repository
	// ("docker.io/library/busybox"): what credentials are looked up for.
	Repository string
	// Tag and Digest are what the reference names; either may be empty.
	Tag, Digest string
}

// ParseReference parses image. An error means the name is invalid
// (InvalidImageName).
func ParseReference(image string) (Reference, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return Reference{}, fmt.Errorf("couldn't parse image name %q: %w", image, err)
	}
	ref := Reference{Image: image, Repository: named.Name()}
	if t, ok := named.(reference.Tagged); ok {
		ref.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		ref.Digest = d.Digest().String()
	}
	if ref.Tag == "" && ref.Digest == "" {
		ref.Tag = "latest"
		ref.Image += ":latest"
	}
	return ref, nil
}

// DefaultPullPolicy is the policy of a container that names none: Always
// for the latest tag (which moves, and is what no tag means), IfNotPresent
// for a fixed tag or a digest.
func (r Reference) DefaultPullPolicy() corev1.PullPolicy {
	if r.Digest == "" && r.Tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
