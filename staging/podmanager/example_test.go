package podmanager_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func Example() {
	static := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "static-uid", Name: "etcd-node1", Namespace: "kube-system",
		Annotations: map[string]string{
			podtypes.ConfigSourceAnnotationKey: "file",
			podtypes.ConfigHashAnnotationKey:   "h1",
		},
	}}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "mirror-uid", Name: "etcd-node1", Namespace: "kube-system",
		Annotations: map[string]string{
			podtypes.ConfigSourceAnnotationKey: "api",
			podtypes.ConfigMirrorAnnotationKey: "h1",
		},
	}}

	m := podmanager.New()
	m.SetPods([]*corev1.Pod{static, mirror})

	got, _ := m.MirrorPodByPod(static)
	fmt.Println("mirror:", got.UID, "current:", podmanager.IsMirrorPodOf(got, static))
	fmt.Println("translated:", m.TranslatePodUID(mirror.UID))

	m.RemovePod(static)
	fmt.Println("orphans:", m.OrphanedMirrorPodFullNames())
	// Output:
	// mirror: mirror-uid current: true
	// translated: static-uid
	// orphans: [etcd-node1_kube-system]
}
