package objectcache_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodeagent/nodeagent/staging/objectcache"
)

func Example() {
	clientset := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"},
		Data:       map[string]string{"mode": "fast"},
	})
	configMaps, err := objectcache.NewWatching(objectcache.ConfigMaps(), objectcache.WatchingOptions{Client: clientset})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- configMaps.Run(ctx) }()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}},
		}}}},
	}
	configMaps.RegisterPod(pod) // starts one watch, on "settings" only
	cm, err := configMaps.Get(ctx, "default", "settings")
	fmt.Println("mode:", cm.Data["mode"], err, "watches:", configMaps.ActiveWatches())

	configMaps.UnregisterPod(pod) // the last reference: the watch stops
	_, err = configMaps.Get(ctx, "default", "settings")
	fmt.Println("watches:", configMaps.ActiveWatches(), "unregistered:", errors.Is(err, objectcache.ErrNotRegistered))

	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// mode: fast <nil> watches: 1
	// watches: 0 unregistered: true
	// run: <nil>
}

func ExampleNewCaching() {
	clientset := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: "default"},
		Data:       map[string][]byte{".dockerconfigjson": []byte("{}")},
	})
	secrets, err := objectcache.NewCaching(objectcache.Secrets(), objectcache.CachingOptions{
		Client: clientset,
		// The node's TTL annotation, as an informer would provide it.
		NodeTTL: func() (ttl time.Duration, ok bool) {
			return objectcache.TTLFromNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{
				Annotations: map[string]string{objectcache.NodeTTLAnnotationKey: "30"},
			}})
		},
	})
	if err != nil {
		panic(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}},
	}
	secrets.RegisterPod(pod)
	s, err := secrets.Get(context.Background(), "default", "registry")
	fmt.Println(len(s.Data), err)
	// Output:
	// 1 <nil>
}
