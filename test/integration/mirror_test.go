package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// registerNode creates the test node's Node object as the node itself, as
// an agent does, and returns it.
func registerNode(ctx context.Context, t *testing.T) *corev1.Node {
	t.Helper()
	node, err := env.NodeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: env.NodeName}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = env.NodeClient.CoreV1().Nodes().Get(ctx, env.NodeName, metav1.GetOptions{})
	}
	if err != nil {
		t.Fatalf("registering node %s as the node identity: %v", env.NodeName, err)
	}
	return node
}

func staticPod(name, hash string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name + "-" + env.NodeName,
			Namespace: metav1.NamespaceDefault,
			UID:       types.UID("static-" + hash),
			Annotations: map[string]string{
				podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource),
				podtypes.ConfigHashAnnotationKey:   hash,
			},
		},
		Spec: corev1.PodSpec{
			NodeName:   env.NodeName,
			Containers: []corev1.Container{{Name: "main", Image: env.BusyboxImage}},
		},
	}
}

func nodeMirrorClient(t *testing.T) *mirror.Client {
	t.Helper()
	c, err := mirror.New(mirror.Options{
		Client:   env.NodeClient,
		NodeName: env.NodeName,
		Nodes: mirror.NodeGetterFunc(func(ctx context.Context) (*corev1.Node, error) {
			return env.NodeClient.CoreV1().Nodes().Get(ctx, env.NodeName, metav1.GetOptions{})
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMirrorPodLifecycleUnderNodeRestriction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := registerNode(ctx, t)
	mc := nodeMirrorClient(t)
	static := staticPod("web", "hash-1")
	fullName := podtypes.PodFullName(static)

	if _, err := mc.Create(ctx, static); err != nil {
		t.Fatalf("creating the mirror pod as the node: %v", err)
	}
	got, err := env.AdminClient.CoreV1().Pods(static.Namespace).Get(ctx, static.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the admin cannot see the mirror pod: %v", err)
	}
	if hash, ok := mirror.MirrorPodHash(got); !ok || hash != "hash-1" {
		t.Errorf("mirror annotation = %q (present %v), want hash-1", hash, ok)
	}
	if n := len(got.OwnerReferences); n != 1 {
		t.Fatalf("mirror pod has %d owner references, want 1: %+v", n, got.OwnerReferences)
	}
	ref := got.OwnerReferences[0]
	if ref.APIVersion != "v1" || ref.Kind != "Node" || ref.Name != env.NodeName || ref.UID != node.UID || ref.Controller == nil || !*ref.Controller {
		t.Errorf("owner reference = %+v, want controller Node %s uid %s", ref, env.NodeName, node.UID)
	}
	if got.UID == static.UID {
		t.Errorf("the apiserver kept the static pod's UID")
	}

	if _, err := mc.Create(ctx, static); err != nil {
		t.Errorf("re-creating with the same hash: %v, want success", err)
	}
	if _, err := mc.Create(ctx, staticPod("web", "hash-2")); !errors.Is(err, mirror.ErrMirrorHashMismatch) {
		t.Errorf("creating with another hash: %v, want ErrMirrorHashMismatch", err)
	}

	stale := types.UID("00000000-0000-0000-0000-000000000000")
	deleted, err := mc.Delete(ctx, fullName, &stale)
	if err != nil || deleted {
		t.Fatalf("delete with a stale UID = %v, %v; want not deleted, no error", deleted, err)
	}
	if _, err := env.AdminClient.CoreV1().Pods(static.Namespace).Get(ctx, static.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the mirror pod is gone after a delete with a stale UID: %v", err)
	}

	right := got.UID
	deleted, err = mc.Delete(ctx, fullName, &right)
	if err != nil || !deleted {
		t.Fatalf("delete with the right UID = %v, %v; want deleted", deleted, err)
	}
	if _, err := env.AdminClient.CoreV1().Pods(static.Namespace).Get(ctx, static.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete, get = %v; want NotFound", err)
	}
	deleted, err = mc.Delete(ctx, fullName, nil)
	if err != nil || deleted {
		t.Errorf("deleting it again = %v, %v; want not deleted, no error", deleted, err)
	}
}

// The node identity is confined to its own node: NodeRestriction is live.
func TestNodeRestrictionRefusesPodsOfOtherNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := registerNode(ctx, t)

	other := staticPod("intruder", "hash-x")
	other.Spec.NodeName = "some-other-node"
	other.UID = ""
	other.Annotations[podtypes.ConfigMirrorAnnotationKey] = "hash-x"
	controller := true
	other.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: env.NodeName, UID: node.UID, Controller: &controller}}
	// Refusals this test provokes on purpose, left out of the run's check
	// for 403s to nodes.
	refused := kubernetes.NewForConfigOrDie(framework.ExpectForbidden(env.NodeConfig))
	_, err := refused.CoreV1().Pods(other.Namespace).Create(ctx, other, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("node creating a mirror pod bound to another node: %v, want Forbidden", err)
	}

	plain := staticPod("not-a-mirror", "hash-y")
	plain.UID = ""
	plain.Annotations = nil
	_, err = refused.CoreV1().Pods(plain.Namespace).Create(ctx, plain, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("node creating a regular (non-mirror) pod: %v, want Forbidden", err)
	}
}
