package volumes_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/volumes"
)

func Example() {
	root, _ := os.MkdirTemp("", "volumes-example")
	defer os.RemoveAll(root)
	m, _ := volumes.New(volumes.Options{RootDir: root})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "1234"},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{Name: "app", VolumeMounts: []corev1.VolumeMount{
				{Name: "cache", MountPath: "/var/cache/app"},
			}}},
		},
	}
	mounts, err := m.Setup(context.Background(), pod)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mount := range mounts["app"] {
		rel, _ := filepath.Rel(root, mount.HostPath)
		fmt.Println(mount.ContainerPath, "<-", strings.ReplaceAll(rel, string(filepath.Separator), "/"))
	}
	fmt.Println(m.Cleanup(pod.UID))
	// Output:
	// /var/cache/app <- pods/1234/volumes/kubernetes.io~empty-dir/cache
	// <nil>
}
