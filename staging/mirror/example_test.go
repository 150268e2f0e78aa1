package mirror_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func Example() {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", UID: "node-uid"}}
	clientset := fake.NewClientset(node)

	c, err := mirror.New(mirror.Options{
		Client:   clientset,
		NodeName: "node1",
		Nodes: mirror.NodeGetterFunc(func(ctx context.Context) (*corev1.Node, error) {
			return clientset.CoreV1().Nodes().Get(ctx, "node1", metav1.GetOptions{})
		}),
	})
	if err != nil {
		panic(err)
	}
	static := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "etcd-node1", Namespace: "kube-system",
		Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: "file", podtypes.ConfigHashAnnotationKey: "h1"},
	}}
	created, err := c.Create(ctx, static)
	fmt.Println("create:", err)
	again, err := c.Create(ctx, static) // same hash: nothing to do
	fmt.Println("again:", err, again.UID == created.UID)

	got, _ := clientset.CoreV1().Pods("kube-system").Get(ctx, "etcd-node1", metav1.GetOptions{})
	hash, _ := mirror.MirrorPodHash(got)
	fmt.Println("owner:", got.OwnerReferences[0].Kind, got.OwnerReferences[0].Name, "hash:", hash)

	deleted, err := c.Delete(ctx, "etcd-node1_kube-system", nil)
	fmt.Println("deleted:", deleted, err)
	// Output:
	// create: <nil>
	// again: <nil> true
	// owner: Node node1 hash: h1
	// deleted: true <nil>
}

func ExampleCheckMirrorable() {
	optional := true
	static := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app",
		Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "t", Optional: &optional,
		}}}},
	}}}}
	err := mirror.CheckMirrorable(static)
	fmt.Println(errors.Is(err, mirror.ErrNotMirrorable))
	fmt.Println(err)
	// Output:
	// true
	// static pod cannot be mirrored: spec.containers[0].env[0].valueFrom.secretKeyRef: a mirror pod may not reference secrets (NodeRestriction refuses it)
}
