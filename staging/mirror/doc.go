// Package mirror creates and deletes mirror pods: the read-only API objects
// through which the apiserver sees a node's static pods.
//
// A mirror pod is a copy of the static pod with the static pod's annotations,
// the mirror annotation set to the static pod's config hash, and a controller
// owner reference to the node's Node object. The NodeRestriction admission
// plugin admits a mirror pod from a node identity only with that owner
// reference, so the Client looks up the Node's UID before each create.
//
//	c, err := mirror.New(mirror.Options{
//		Client:   clientset,
//		NodeName: "node1",
//		Nodes:    mirror.NodeGetterFunc(func(ctx context.Context) (*corev1.Node, error) { ... }),
//	})
//	created, err := c.Create(ctx, staticPod)
//	deleted, err := c.Delete(ctx, "etcd-node1_kube-system", &mirrorUID)
//
// Create is idempotent for an unchanged static pod: an existing mirror with
// the same hash is success. An existing pod with another hash yields an
// error matching ErrMirrorHashMismatch; the caller deletes the outdated
// mirror and creates again.
package mirror
