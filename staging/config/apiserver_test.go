package config

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// fakePods is the fake clientset's pod client of every namespace. Like
// the fake clientset, it tells the reflector that it cannot stream lists
// (watch-list), which the fake's tracker does not implement.
type fakePods struct{ typedcorev1.PodInterface }

func newFakePods(cs *fake.Clientset) fakePods {
	return fakePods{cs.CoreV1().Pods(metav1.NamespaceAll)}
}

func (fakePods) IsWatchListSemanticsUnSupported() bool { return true }

func boundPod(name, uid string) *corev1.Pod {
	p := testPod(name, uid)
	p.Spec.NodeName = testNode
	return p
}

// TestAPIServerSourceSendsSnapshots runs the source against the fake
// clientset (which ignores field selectors; the integration test checks
// those against a real apiserver) into an incremental merger.
func TestAPIServerSourceSendsSnapshots(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cs := fake.NewClientset(boundPod("a", "ua"))
	m := NewMerger(MergerOptions{Buffer: 100})
	src, err := NewAPIServerSource(APIServerOptions{Pods: newFakePods(cs), NodeName: testNode, Sink: m})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	expect(t, m, "ADD api [api:a]")
	if !m.SeenAllSources(podtypes.APIServerSource) {
		t.Error("the apiserver source is not seen after its first list")
	}

	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, boundPod("b", "ub"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "ADD api [api:b]")

	changed := boundPod("a", "ua")
	changed.Spec.Containers[0].Image = "img:2"
	if _, err := pods.Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "UPDATE api [api:a]")

	status := changed.DeepCopy()
	status.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, status, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "RECONCILE api [api:a]")

	deleting := status.DeepCopy()
	ts := metav1.Now()
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &ts, new(int64(30))
	if _, err := pods.Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "DELETE api [api:a]")

	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "REMOVE api [api:a]")
}

func TestAPIServerSourceEmptyNodeIsReady(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := make(chanSink, 10)
	src, err := NewAPIServerSource(APIServerOptions{Pods: newFakePods(fake.NewClientset()), NodeName: testNode, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	u := next(t, sink)
	if u.Op != podtypes.SET || u.Source != podtypes.APIServerSource || len(u.Pods) != 0 {
		t.Errorf("first update = %s, want an empty api SET", summarize(u))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestNewAPIServerSourceNeedsItsOptions(t *testing.T) {
	sink := chanSink(make(chan podtypes.PodUpdate))
	pods := newFakePods(fake.NewClientset())
	for _, opts := range []APIServerOptions{{NodeName: "n", Sink: sink}, {Pods: pods, Sink: sink}, {Pods: pods, NodeName: "n"}} {
		if _, err := NewAPIServerSource(opts); err == nil {
			t.Errorf("NewAPIServerSource(%+v) succeeded", opts)
		}
	}
}

// A list that failed waits out the back-off (here an hour) unless
// Reconnect says the apiserver answers again; a watch that runs is left
// alone by it.
func TestAPIServerSourceReconnectsAtOnce(t *testing.T) {
	cs := fake.NewClientset()
	var down atomic.Bool
	var lists atomic.Int32
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		lists.Add(1)
		if down.Load() {
			return true, nil, syscall.ECONNREFUSED
		}
		return false, nil, nil
	})
	down.Store(true)
	reconnect := make(chan struct{})
	sink := make(chanSink, 10)
	src, err := NewAPIServerSource(APIServerOptions{Pods: newFakePods(cs), NodeName: testNode, Sink: sink,
		Backoff: &wait.Backoff{Duration: time.Hour}, Reconnect: reconnect})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	for lists.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := cs.Tracker().Add(boundPod("a", "ua")); err != nil {
		t.Fatal(err)
	}
	down.Store(false)
	reconnect <- struct{}{}
	if u := next(t, sink); u.Op != podtypes.SET || len(u.Pods) != 1 || u.Pods[0].Name != "a" {
		t.Fatalf("after Reconnect: %s, want a SET of a", summarize(u))
	}

	listed := lists.Load()
	reconnect <- struct{}{}
	reconnect <- struct{}{}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, boundPod("b", "ub"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := next(t, sink); len(u.Pods) != 2 {
		t.Fatalf("after b was created: %s, want a and b", summarize(u))
	}
	if got := lists.Load() - listed; got != 0 {
		t.Errorf("Reconnect while the watch ran listed again (%d lists)", got)
	}
}
