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
//
// NodeRestriction also refuses a mirror pod that references any other API
// object: a service account, a secret or config map (optional or not, in
// env, envFrom, image pull secrets or any volume), a resource claim, a
// persistent volume claim, a CSI or glusterfs volume, a projected token,
// trust bundle or pod certificate, or a volume type it does not know.
// CheckMirrorable finds such a reference before any request is made, so
// that the agent reports the static pod as not mirrorable (an error
// matching ErrNotMirrorable, naming the field) instead of collecting 403s:
//
//	if err := mirror.CheckMirrorable(staticPod); err != nil {
//		// run the pod anyway; report err
//	}
package mirror
