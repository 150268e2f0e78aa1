package node

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/uidpatch"
)

// labels are the labels the agent sets on its Node.
func (n *Node) labels() map[string]string {
	return Labels(n.opts.Name, n.opts.Machine, n.opts.Labels)
}

// Labels are the labels a node named name on machine m registers with:
// the ones every node carries, then extra (--node-labels). Static pods'
// node selectors are matched against them while the Node is not known.
func Labels(name string, m Machine, extra map[string]string) map[string]string {
	l := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   m.OperatingSystem,
		corev1.LabelArchStable: m.Architecture,
	}
	maps.Copy(l, extra)
	return l
}

// register creates the Node, or adopts the one of its name that exists
// (registered by an earlier run, or by an administrator): its labels are
// brought up to date; its taints, which NodeRestriction forbids a node to
// change, are left as they are.
func (n *Node) register(ctx context.Context) (*corev1.Node, error) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Labels: n.labels()},
		Spec:       corev1.NodeSpec{Taints: n.opts.Taints},
	}
	status, err := n.desiredStatus(ctx, node)
	if err != nil {
		return nil, err
	}
	node.Status = status
	now := n.clock.Now()
	stampHeartbeats(node.Status.Conditions, now)
	created, err := n.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		n.log.Info("Registered the Node", "uid", created.UID)
		n.markWritten(now)
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("registering the Node: %w", err)
	}
	existing, err := n.client.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("adopting the existing Node: %w", err)
	}
	return n.adopt(ctx, existing)
}

// adopt patches the labels the agent owns onto an existing Node.
func (n *Node) adopt(ctx context.Context, existing *corev1.Node) (*corev1.Node, error) {
	want := existing.DeepCopy()
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	maps.Copy(want.Labels, n.labels())
	if maps.Equal(want.Labels, existing.Labels) {
		n.log.Info("Adopted the existing Node", "uid", existing.UID)
		return existing, nil
	}
	patch, err := uidpatch.TwoWay(existing, want, existing.UID)
	if err != nil {
		return nil, err
	}
	adopted, err := n.client.CoreV1().Nodes().Patch(ctx, n.opts.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("adopting the existing Node (patching its labels): %w", err)
	}
	n.log.Info("Adopted the existing Node and set its labels", "uid", adopted.UID)
	return adopted, nil
}
