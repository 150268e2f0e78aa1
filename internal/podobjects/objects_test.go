package podobjects

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func podUsing(name, configMap string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + "name"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}}},
	}
}

func TestParseStrategy(t *testing.T) {
	for _, s := range []string{"Watch", "Cache", "Get"} {
		if got, err := ParseStrategy(s); err != nil || string(got) != s {
			t.Errorf("ParseStrategy(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseStrategy("watch"); err == nil {
		t.Error("a misspelt strategy was taken")
	}
}

func TestNothingIsReadBeforeRun(t *testing.T) {
	o, err := New(Options{Strategy: Watch})
	if err != nil {
		t.Fatal(err)
	}
	o.RegisterPod(podUsing("p", "cfg"))
	if _, err := o.ConfigMap(context.Background(), "ns", "cfg"); !errors.Is(err, ErrNotConnected) {
		t.Errorf("ConfigMap before Run: %v, want ErrNotConnected", err)
	}
	if _, err := o.ServiceAccountToken(context.Background(), podUsing("p", "cfg"), &corev1.ServiceAccountTokenProjection{}); !errors.Is(err, ErrNotConnected) {
		t.Errorf("token before Run: %v, want ErrNotConnected", err)
	}
	if _, err := o.Allocatable(); !errors.Is(err, ErrNotConnected) {
		t.Errorf("Allocatable before Run: %v, want ErrNotConnected", err)
	}
}

// Each strategy serves the objects of pods registered before Run and
// after; Watch also reports changes.
func TestStrategies(t *testing.T) {
	for _, s := range []Strategy{Watch, Cache, Get} {
		t.Run(string(s), func(t *testing.T) {
			client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "early", Namespace: "ns"}, Data: map[string]string{"k": "1"}})
			allowAfter(client, 0)
			var mu sync.Mutex
			var changes []string
			o, err := New(Options{Strategy: s})
			if err != nil {
				t.Fatal(err)
			}
			o.RegisterPod(podUsing("before", "early"))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: *newQuantity(110)}}}
			go func() {
				done <- o.Run(ctx, client, func(context.Context) (*corev1.Node, error) { return node, nil }, listener{changed: func(secret bool, ns, name string) {
					mu.Lock()
					defer mu.Unlock()
					changes = append(changes, ns+"/"+name)
				}})
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			var cm *corev1.ConfigMap
			deadline := time.Now().Add(5 * time.Second)
			for cm == nil && time.Now().Before(deadline) {
				if got, err := o.ConfigMap(ctx, "ns", "early"); err == nil {
					cm = got
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if cm == nil || cm.Data["k"] != "1" {
				t.Fatalf("ConfigMap of a pod registered before Run = %v", cm)
			}
			o.RegisterPod(podUsing("after", "late"))
			if _, err := o.ConfigMap(ctx, "ns", "late"); !apierrors.IsNotFound(err) {
				t.Errorf("a missing ConfigMap: %v, want NotFound", err)
			}
			if alloc, err := o.Allocatable(); err != nil || alloc.Pods().Value() != 110 {
				t.Errorf("Allocatable = %v, %v", alloc, err)
			}
			if s != Watch {
				return
			}
			if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "ns"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for time.Now().Before(deadline) {
				mu.Lock()
				n := len(changes)
				mu.Unlock()
				if n > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(changes) != 1 || changes[0] != "ns/late" {
				t.Errorf("changes = %v, want the creation of ns/late", changes)
			}
		})
	}
}

func newQuantity(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.DecimalSI) }

// allowAfter answers the node's access reviews: denied n times, then
// allowed, as the Node authorizer does until it has seen a new pod.
func allowAfter(client *fake.Clientset, n int) *atomic.Int32 {
	var asked atomic.Int32
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		review := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview).DeepCopy()
		review.Status.Allowed = asked.Add(1) > int32(n)
		return true, review, nil
	})
	return &asked
}

// A new pod's objects are not read before the apiserver lets the node
// read them: its reads fail with ErrNotYetAuthorized, no request is made,
// and the listener is told when they may.
func TestReadsWaitUntilTheNodeMayRead(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"k": "1"}})
	asked := allowAfter(client, 3)
	ready := make(chan types.UID, 1)
	o, err := New(Options{Strategy: Get})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, client, nil, listener{ready: func(uid types.UID) { ready <- uid }}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	pod := podUsing("p", "cfg")
	o.RegisterPod(pod)
	_, err = o.ConfigMap(ctx, "ns", "cfg")
	for errors.Is(err, ErrNotConnected) { // Run has not begun yet
		time.Sleep(time.Millisecond)
		_, err = o.ConfigMap(ctx, "ns", "cfg")
	}
	if !errors.Is(err, ErrNotYetAuthorized) {
		t.Fatalf("read before the review allowed it: %v, want ErrNotYetAuthorized", err)
	}
	select {
	case uid := <-ready:
		if uid != pod.UID {
			t.Errorf("ObjectsReady(%s), want %s", uid, pod.UID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ObjectsReady not called")
	}
	if n := asked.Load(); n != 4 {
		t.Errorf("%d reviews, want 4 (3 denied, then allowed)", n)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "configmaps" && a.GetVerb() == "get" {
			if asked.Load() < 4 {
				t.Error("the ConfigMap was read before the node was allowed to")
			}
		}
	}
	if cm, err := o.ConfigMap(ctx, "ns", "cfg"); err != nil || cm.Data["k"] != "1" {
		t.Errorf("read once allowed: %v, %v", cm, err)
	}
	if _, err := o.ConfigMap(ctx, "ns", "other"); !errors.Is(err, ErrNotYetAuthorized) {
		t.Errorf("read of an object no pod references: %v, want refused without a request", err)
	}
}

// A pod whose token is due a refresh is told to the listener, so that its
// sync rewrites the token file.
func TestPodsWithTokensDueAreSynced(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10_000, 0))
	client := fake.NewClientset()
	allowAfter(client, 0)
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenRequest).DeepCopy()
		tr.Status = authnv1.TokenRequestStatus{Token: "t", ExpirationTimestamp: metav1.NewTime(clk.Now().Add(time.Hour))}
		return true, tr, nil
	})
	ready := make(chan types.UID, 10)
	o, err := New(Options{Strategy: Get, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, client, nil, listener{ready: func(uid types.UID) { ready <- uid }}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	projection := &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-p"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: projection}}}}}}},
	}
	o.RegisterPod(pod)
	select {
	case <-ready: // authorized
	case <-time.After(5 * time.Second):
		t.Fatal("the pod was not authorized")
	}
	if tok, err := o.ServiceAccountToken(ctx, pod, projection); err != nil || tok != "t" {
		t.Fatalf("token = %q, %v", tok, err)
	}
	clk.Step(30 * time.Minute) // not due: refreshed at 48 min
	select {
	case uid := <-ready:
		t.Fatalf("ObjectsReady(%s) before the token was due", uid)
	case <-time.After(100 * time.Millisecond):
	}
	clk.Step(20 * time.Minute)
	select {
	case uid := <-ready:
		if uid != pod.UID {
			t.Errorf("ObjectsReady(%s), want %s", uid, pod.UID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pod was not synced for its token's refresh")
	}
}

// listener hands what the Objects tell to the test; a nil func ignores it.
type listener struct {
	changed func(secret bool, namespace, name string)
	ready   func(types.UID)
}

func (l listener) ObjectChanged(secret bool, namespace, name string) {
	if l.changed != nil {
		l.changed(secret, namespace, name)
	}
}

func (l listener) ObjectsReady(uid types.UID) {
	if l.ready != nil {
		l.ready(uid)
	}
}
