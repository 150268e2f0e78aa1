package objectcache

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeTTLAnnotationKey is the Node annotation through which the control
// plane (its TTL controller, scaling with cluster size) tells nodes how long
// they may cache ConfigMaps and Secrets, in whole seconds.
const NodeTTLAnnotationKey = "node.alpha.kubernetes.io/ttl"

// TTLFromNode returns the TTL a Node's annotation sets, and whether it sets
// one: a missing, malformed or negative value does not. Zero is valid and
// means that every Get reads the apiserver.
func TTLFromNode(node *corev1.Node) (time.Duration, bool) {
	if node == nil {
		return 0, false
	}
	v, ok := node.Annotations[NodeTTLAnnotationKey]
	if !ok {
		return 0, false
	}
	secs, err := strconv.Atoi(v)
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}
