package admission

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type nodeFunc func(context.Context) (*corev1.Node, error)

func (f nodeFunc) Node(ctx context.Context) (*corev1.Node, error) { return f(ctx) }

// Pods wait until the Node is known and come out the oldest first.
func TestWaitingHoldsUntilTheNode(t *testing.T) {
	w := NewWaiting()
	if w.Node() != nil {
		t.Fatal("a Node before Connected")
	}
	at := func(uid string, sec int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), CreationTimestamp: metav1.NewTime(time.Unix(int64(sec), 0))}}
	}
	if !w.Hold(at("late", 20)) || !w.Hold(at("early", 10)) || w.Hold(at("late", 20)) {
		t.Error("Hold reports first wrongly")
	}
	if held := w.Held(); len(held) != 2 || held[0].UID != "early" {
		t.Errorf("Held = %v, want early then late", held)
	}
	if !w.Drop("early") || w.Drop("early") || w.IsHeld("early") || !w.IsHeld("late") {
		t.Error("Drop or IsHeld wrong")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	w.Connected(nodeFunc(func(context.Context) (*corev1.Node, error) { return node, nil }))
	if w.Node() != node {
		t.Error("Node after Connected is not the getter's")
	}
}
