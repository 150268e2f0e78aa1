package config

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrInvalidOptions is wrapped by the error of NewFileSource, NewHTTPSource
// and NewAPIServerSource for each option that cannot work; they are
// reported together.
var ErrInvalidOptions = errors.New("invalid pod source options")

// Sink receives the updates of a source. *Merger is the Sink the agent
// uses; a test may pass its own.
type Sink interface {
	// Merge takes ownership of update.Pods: the source must not touch them
	// afterwards. It blocks until the update is applied and its
	// notifications are delivered, or ctx ends.
	Merge(ctx context.Context, update podtypes.PodUpdate) error
}

// PodListerWatcher lists and watches pods: the part of client-go's typed
// pod client that the apiserver source uses, so that
// clientset.CoreV1().Pods(metav1.NamespaceAll) is one without this package
// importing the clientset (and the scheme of every API group it
// registers). The source sets the field selector of the options it passes.
type PodListerWatcher interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// EventRecorder is the part of client-go's record.EventRecorder that the
// sources and the merger use to report refusals; pass a real recorder to
// turn them into Kubernetes events, or record.FakeRecorder in tests.
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// nopRecorder discards events when no recorder is configured.
type nopRecorder struct{}

func (nopRecorder) Eventf(runtime.Object, string, string, string, ...any) {}

// nodeReference is the object that events about manifests are attached to
// when no pod exists yet: this node, referenced as the kubelet does (its
// UID is its name).
func nodeReference(nodeName string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: nodeName, UID: types.UID(nodeName)}
}

// nodeRefOf is nodeReference, or nil for no node name.
func nodeRefOf(nodeName string) *corev1.ObjectReference {
	if nodeName == "" {
		return nil
	}
	return nodeReference(nodeName)
}

// copyPods deep-copies pods, so that what a receiver gets is its own.
func copyPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
