package runtime

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/nodeagent/nodeagent/internal/allocation"
	corev1 "k8s.io/api/core/v1"
)

// HashContainer returns the hash of a container's spec, as stored in the
// io.kubernetes.container.hash annotation. A running container whose hash
// differs from its spec's is replaced.
//
// The kubelet hashes only name and image, because the apiserver allows no
// other change to a running pod. Static and HTTP pods have no such guard,
// so every field counts here, but for the cpu and memory requests and
// limits: those an API pod's resize changes in place (see resize.go), and
// a static pod's manifest cannot change without changing its UID.
// encoding/json is deterministic (struct fields in order, map keys sorted),
// and omits unset fields, so the hash stays the same across versions of
// k8s.io/api that add optional fields.
func HashContainer(c *corev1.Container) string {
	hashed := *c
	hashed.Resources = corev1.ResourceRequirements{
		Requests: withoutResizable(c.Resources.Requests),
		Limits:   withoutResizable(c.Resources.Limits),
		Claims:   c.Resources.Claims,
	}
	return hashJSON(&hashed)
}

// specChanged reports whether the running instance st was made from
// another spec than c. A container made by an agent before in-place
// resizes has the hash of its whole spec, resources included: that one
// matches too, so that an upgrade adopts what runs.
func specChanged(c *corev1.Container, st *ContainerStatus) bool {
	return st.Hash != HashContainer(c) && st.Hash != wholeSpecHash(c)
}

// wholeSpecHash is the hash of every field of c, as agents before
// in-place resizes hashed containers.
func wholeSpecHash(c *corev1.Container) string {
	return hashJSON(c)
}

// hashJSON is the FNV-64a hash of c's JSON, in hex.
func hashJSON(c *corev1.Container) string {
	raw, _ := json.Marshal(c) // a corev1.Container has nothing that fails to marshal
	h := fnv.New64a()
	_, _ = h.Write(raw) // a hash.Hash never fails to write
	return strconv.FormatUint(h.Sum64(), 16)
}

// withoutResizable is l without cpu and memory; nil when nothing is left.
func withoutResizable(l corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range l {
		if slices.Contains(allocation.Resources, name) {
			continue
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[name] = q
	}
	return out
}
