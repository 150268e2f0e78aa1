package podtypes_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func Example() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:      "etcd-node1",
		Namespace: "kube-system",
		Annotations: map[string]string{
			podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource),
			podtypes.ConfigHashAnnotationKey:   "3f2a",
		},
	}}
	full := podtypes.PodFullName(pod)
	name, ns, _ := podtypes.ParseFullName(full)
	fmt.Println(full, name, ns)
	fmt.Println("static:", podtypes.IsStaticPod(pod), "mirror:", podtypes.IsMirrorPod(pod))

	update := podtypes.PodUpdate{Op: podtypes.ADD, Source: podtypes.FileSource, Pods: []*corev1.Pod{pod}}
	fmt.Println(update.Op, update.Source, len(update.Pods))
	// Output:
	// etcd-node1_kube-system etcd-node1 kube-system
	// static: true mirror: false
	// ADD file 1
}
