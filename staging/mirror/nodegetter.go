package mirror

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// NodeGetter returns this node's Node object. The agent usually answers from
// an informer's cache; a plain API get works too.
type NodeGetter interface {
	Node(ctx context.Context) (*corev1.Node, error)
}

// NodeGetterFunc adapts a function to NodeGetter.
type NodeGetterFunc func(ctx context.Context) (*corev1.Node, error)

// Node calls f.
func (f NodeGetterFunc) Node(ctx context.Context) (*corev1.Node, error) { return f(ctx) }
