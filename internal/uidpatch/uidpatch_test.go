package uidpatch

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTwoWayCarriesTheUIDAndOnlyTheChange(t *testing.T) {
	old := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		}},
	}
	next := old.DeepCopy()
	next.Status.Phase = corev1.PodRunning
	next.Status.Conditions[1].Status = corev1.ConditionTrue

	patch, err := TwoWay(old, next, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"uid": "u1"},
		"status": map[string]any{
			"phase": "Running",
			// Conditions merge by type: only the changed one is sent,
			// with the order of the list kept.
			"$setElementOrder/conditions": []any{map[string]any{"type": "PodScheduled"}, map[string]any{"type": "Ready"}},
			"conditions":                  []any{map[string]any{"type": "Ready", "status": "True"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("patch (-want +got):\n%s", diff)
	}
}

func TestTwoWayOfEqualObjectsIsTheUIDAlone(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "nu"}}
	patch, err := TwoWay(n, n.DeepCopy(), "nu")
	if err != nil {
		t.Fatal(err)
	}
	if string(patch) != `{"metadata":{"uid":"nu"}}` {
		t.Fatalf("patch = %s", patch)
	}
}
