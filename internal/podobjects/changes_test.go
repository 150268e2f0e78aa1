package podobjects

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A change told twice before the loop takes it is taken once; the pods it
// affects are those of its namespace that reference the object, or the
// pod named by UID.
func TestChangesQueueAndAffect(t *testing.T) {
	c := NewChanges()
	c.ObjectChanged(false, "ns", "cfg")
	c.ObjectChanged(false, "ns", "cfg")
	c.ObjectsReady("p2")
	select {
	case <-c.Signal():
	default:
		t.Fatal("no signal after a change")
	}
	got := c.Take()
	if len(got) != 2 {
		t.Fatalf("Take = %v, want the ConfigMap once and the pod", got)
	}
	if more := c.Take(); len(more) != 0 {
		t.Errorf("second Take = %v, want nothing", more)
	}
	uses := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", UID: "p1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
		Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
	}}}}
	other := uses.DeepCopy()
	other.Namespace, other.UID = "elsewhere", "p2"
	if !got[0].Affects(uses) || got[0].Affects(other) {
		t.Errorf("the ConfigMap's change affects %v %v, want the pod of its namespace only", got[0].Affects(uses), got[0].Affects(other))
	}
	if got[1].Affects(uses) || !got[1].Affects(other) {
		t.Error("the pod's change affects another pod, or not it")
	}
}
