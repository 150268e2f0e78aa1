package objectcache

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Object is what a manager caches: a typed API object with metadata, such
// as *corev1.ConfigMap or *corev1.Secret.
type Object interface {
	runtime.Object
	metav1.Object
}

// Kind describes one kind of object to both strategies: how to read and
// watch it, when it is immutable, and which of them a pod references.
// ConfigMaps and Secrets return the two kinds a node needs; the zero Kind
// is invalid.
type Kind[T Object] struct {
	resource   schema.GroupResource
	get        func(ctx context.Context, c kubernetes.Interface, namespace, name string, opts metav1.GetOptions) (T, error)
	list       func(ctx context.Context, c kubernetes.Interface, namespace string, opts metav1.ListOptions) ([]T, string, error)
	watch      func(ctx context.Context, c kubernetes.Interface, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	immutable  func(T) bool
	references func(pod *corev1.Pod) []string
}

// Resource names the kind's API resource, as NotFound errors and the
// metrics' "kind" label do.
func (k Kind[T]) Resource() schema.GroupResource { return k.resource }

// ConfigMaps is the Kind of core/v1 ConfigMaps.
func ConfigMaps() Kind[*corev1.ConfigMap] {
	return Kind[*corev1.ConfigMap]{
		resource: corev1.Resource("configmaps"),
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string, o metav1.GetOptions) (*corev1.ConfigMap, error) {
			return c.CoreV1().ConfigMaps(ns).Get(ctx, name, o)
		},
		list: func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) ([]*corev1.ConfigMap, string, error) {
			l, err := c.CoreV1().ConfigMaps(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			items := make([]*corev1.ConfigMap, len(l.Items))
			for i := range l.Items {
				items[i] = &l.Items[i]
			}
			return items, l.ResourceVersion, nil
		},
		watch: func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		},
		immutable:  func(cm *corev1.ConfigMap) bool { return cm.Immutable != nil && *cm.Immutable },
		references: ConfigMapNames,
	}
}

// Secrets is the Kind of core/v1 Secrets.
func Secrets() Kind[*corev1.Secret] {
	return Kind[*corev1.Secret]{
		resource: corev1.Resource("secrets"),
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string, o metav1.GetOptions) (*corev1.Secret, error) {
			return c.CoreV1().Secrets(ns).Get(ctx, name, o)
		},
		list: func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) ([]*corev1.Secret, string, error) {
			l, err := c.CoreV1().Secrets(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			items := make([]*corev1.Secret, len(l.Items))
			for i := range l.Items {
				items[i] = &l.Items[i]
			}
			return items, l.ResourceVersion, nil
		},
		watch: func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Secrets(ns).Watch(ctx, o)
		},
		immutable:  func(s *corev1.Secret) bool { return s.Immutable != nil && *s.Immutable },
		references: SecretNames,
	}
}

// check refuses a Kind not made by ConfigMaps or Secrets.
func (k Kind[T]) check() error {
	if k.get == nil || k.list == nil || k.watch == nil || k.immutable == nil || k.references == nil {
		return fmt.Errorf("%w: use ConfigMaps() or Secrets() for the kind", ErrInvalidOptions)
	}
	return nil
}
