package runtime

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// HashContainer returns the hash of a container's whole spec, as stored in
// the io.kubernetes.container.hash annotation. A running container whose
// hash differs from its spec's is replaced.
//
// The kubelet hashes only name and image, because the apiserver allows no
// other change to a running pod. Static and HTTP pods have no such guard,
// so every field counts here. encoding/json is deterministic (struct fields
// in order, map keys sorted), and omits unset fields, so the hash stays the
// same across versions of k8s.io/api that add optional fields.
func HashContainer(c *corev1.Container) string {
	raw, _ := json.Marshal(c) // a corev1.Container has nothing that fails to marshal
	h := fnv.New64a()
	_, _ = h.Write(raw) // a hash.Hash never fails to write
	return strconv.FormatUint(h.Sum64(), 16)
}
