package mirror

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Options configure a Client. All fields are required.
type Options struct {
	// Client talks to the apiserver, normally as the node's identity.
	Client kubernetes.Interface
	// NodeName is the name of this node's Node object.
	NodeName string
	// Nodes returns this node's Node object, for its UID.
	Nodes NodeGetter
}

// Client creates and deletes mirror pods. It is safe for concurrent use.
type Client struct {
	client   kubernetes.Interface
	nodeName string
	nodes    NodeGetter
}

// New returns a Client, or an error naming every missing option, each
// wrapping ErrInvalidOptions.
func New(opts Options) (*Client, error) {
	var errs []error
	for _, f := range []struct {
		name    string
		missing bool
	}{{"Client", opts.Client == nil}, {"NodeName", opts.NodeName == ""}, {"Nodes", opts.Nodes == nil}} {
		if f.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, f.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Client{client: opts.Client, nodeName: opts.NodeName, nodes: opts.Nodes}, nil
}

// Create creates the mirror pod of a static pod and returns it as the
// apiserver stored it. An existing mirror with the same hash counts as
// created, and is returned; any other existing pod of that name is an
// error matching ErrMirrorHashMismatch. A static pod that cannot be
// mirrored is an error matching ErrNotMirrorable, found before any request.
func (c *Client) Create(ctx context.Context, static *corev1.Pod) (*corev1.Pod, error) {
	fullName := podtypes.PodFullName(static)
	if err := CheckMirrorable(static); err != nil {
		return nil, fmt.Errorf("mirror pod %q: %w", fullName, err)
	}
	ownerRef, err := c.nodeOwnerReference(ctx)
	if err != nil {
		return nil, fmt.Errorf("mirror pod %q: %w", fullName, err)
	}
	mirrorPod := Build(static, ownerRef)
	created, err := c.client.CoreV1().Pods(mirrorPod.Namespace).Create(ctx, mirrorPod, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("mirror pod %q: create: %w", fullName, err)
	}
	// The create response carries no object on conflict, so read the
	// existing pod to learn whether it already mirrors this version.
	existing, getErr := c.client.CoreV1().Pods(mirrorPod.Namespace).Get(ctx, mirrorPod.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, fmt.Errorf("mirror pod %q: exists, but reading it failed: %w", fullName, getErr)
	}
	want := StaticPodHash(static)
	got, isMirror := MirrorPodHash(existing)
	switch {
	case !isMirror:
		return nil, fmt.Errorf("mirror pod %q: a pod that is not a mirror pod holds the name: %w", fullName, ErrMirrorHashMismatch)
	case got != want:
		return nil, fmt.Errorf("mirror pod %q: existing mirror has hash %q, static pod has %q: %w", fullName, got, want, ErrMirrorHashMismatch)
	}
	return existing, nil
}

// Delete deletes the mirror pod with the given full name at once (grace
// period 0). With a non-nil uid it deletes only the pod of that UID. It
// reports whether it deleted the pod: a pod that is already gone, or whose
// UID differs from uid, is not deleted and is not an error.
func (c *Client) Delete(ctx context.Context, fullName string, uid *types.UID) (bool, error) {
	name, namespace, err := podtypes.ParseFullName(fullName)
	if err != nil {
		return false, fmt.Errorf("delete mirror pod: %w", err)
	}
	opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if uid != nil {
		opts.Preconditions = &metav1.Preconditions{UID: uid}
	}
	err = c.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil
	}
	return false, fmt.Errorf("delete mirror pod %q: %w", fullName, err)
}

func (c *Client) nodeOwnerReference(ctx context.Context) (metav1.OwnerReference, error) {
	node, err := c.nodes.Node(ctx)
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("node %q: %w: %w", c.nodeName, ErrNodeUID, err)
	}
	if node == nil || node.UID == "" {
		return metav1.OwnerReference{}, fmt.Errorf("node %q has no UID: %w", c.nodeName, ErrNodeUID)
	}
	controller := true
	return metav1.OwnerReference{
		APIVersion: corev1.SchemeGroupVersion.String(),
		Kind:       "Node",
		Name:       c.nodeName,
		UID:        node.UID,
		Controller: &controller,
	}, nil
}
