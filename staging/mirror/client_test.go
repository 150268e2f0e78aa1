package mirror

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const nodeName = "node1"

var podsResource = schema.GroupResource{Resource: "pods"}

func testNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "node-uid-1"}}
}

func staticPod(hash string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "etcd-node1", Namespace: "kube-system", UID: "static-uid",
			Labels: map[string]string{"component": "etcd"},
			Annotations: map[string]string{
				podtypes.ConfigSourceAnnotationKey:    "file",
				podtypes.ConfigHashAnnotationKey:      hash,
				podtypes.ConfigFirstSeenAnnotationKey: "2026-11-22T10:00:00.000000000Z",
				"example.com/keep":                    "me",
			},
		},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "etcd", Image: "etcd:1"}}},
	}
}

func newClient(t *testing.T, cs *fake.Clientset, node *corev1.Node, nodeErr error) *Client {
	t.Helper()
	c, err := New(Options{Client: cs, NodeName: nodeName, Nodes: NodeGetterFunc(func(context.Context) (*corev1.Node, error) {
		return node, nodeErr
	})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCreateSetsOwnerReferenceAndAnnotationsExactly(t *testing.T) {
	cs := fake.NewClientset()
	c := newClient(t, cs, testNode(), nil)
	static := staticPod("h1")
	before := static.DeepCopy()

	if _, err := c.Create(context.Background(), static); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, err := cs.CoreV1().Pods("kube-system").Get(context.Background(), "etcd-node1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controller := true
	wantOwners := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: "node-uid-1", Controller: &controller}}
	if diff := cmp.Diff(wantOwners, got.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{
		podtypes.ConfigSourceAnnotationKey:    "file",
		podtypes.ConfigHashAnnotationKey:      "h1",
		podtypes.ConfigFirstSeenAnnotationKey: "2026-11-22T10:00:00.000000000Z",
		podtypes.ConfigMirrorAnnotationKey:    "h1",
		"example.com/keep":                    "me",
	}
	if diff := cmp.Diff(wantAnnotations, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(static.Spec, got.Spec); diff != "" {
		t.Errorf("spec not copied (-want +got):\n%s", diff)
	}
	if got.UID == static.UID {
		t.Errorf("mirror pod carries the static pod's UID %q; the apiserver must assign its own", got.UID)
	}
	if diff := cmp.Diff(before, static); diff != "" {
		t.Errorf("Create modified the static pod (-before +after):\n%s", diff)
	}
}

func TestCreateWhenMirrorExists(t *testing.T) {
	tests := []struct {
		name     string
		existing *corev1.Pod
		wantErr  error
		wantText string
	}{
		{name: "same hash is success", existing: Build(staticPod("h1"), metav1.OwnerReference{})},
		{name: "different hash", existing: Build(staticPod("h0"), metav1.OwnerReference{}), wantErr: ErrMirrorHashMismatch, wantText: `hash "h0", static pod has "h1"`},
		{name: "not a mirror pod", existing: func() *corev1.Pod { p := staticPod("h1"); p.Annotations = nil; return p }(), wantErr: ErrMirrorHashMismatch, wantText: "not a mirror pod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.existing)
			c := newClient(t, cs, testNode(), nil)
			_, err := c.Create(context.Background(), staticPod("h1"))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Create: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), "etcd-node1_kube-system") {
				t.Fatalf("Create error = %v; want %v naming the pod and containing %q", err, tt.wantErr, tt.wantText)
			}
		})
	}
}

// The real apiserver answers AlreadyExists with no object; a reactor gives
// the same answer while the existing pod is readable through the tracker.
func TestCreateAlreadyExistsFromReactorReadsExisting(t *testing.T) {
	for _, tc := range []struct {
		existingHash string
		wantErr      bool
	}{{"h1", false}, {"h2", true}} {
		cs := fake.NewClientset(Build(staticPod(tc.existingHash), metav1.OwnerReference{}))
		cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewAlreadyExists(podsResource, "etcd-node1")
		})
		_, err := newClient(t, cs, testNode(), nil).Create(context.Background(), staticPod("h1"))
		if gotErr := errors.Is(err, ErrMirrorHashMismatch); gotErr != tc.wantErr || (!tc.wantErr && err != nil) {
			t.Errorf("existing hash %s: Create error = %v, want mismatch=%v", tc.existingHash, err, tc.wantErr)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	serverErr := apierrors.NewInternalError(errors.New("etcd down"))
	tests := []struct {
		name     string
		node     *corev1.Node
		nodeErr  error
		reactor  func(*fake.Clientset)
		wantIs   error
		wantText string
	}{
		{name: "node missing", nodeErr: apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, nodeName), wantIs: ErrNodeUID, wantText: `node "node1"`},
		{name: "node without UID", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, wantIs: ErrNodeUID, wantText: "has no UID"},
		{name: "nil node", wantIs: ErrNodeUID, wantText: "has no UID"},
		{
			name: "server error on create", node: testNode(), wantText: "etcd down",
			reactor: func(cs *fake.Clientset) {
				cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, serverErr })
			},
		},
		{
			name: "exists but get fails", node: testNode(), wantText: "reading it failed",
			reactor: func(cs *fake.Clientset) {
				cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewAlreadyExists(podsResource, "etcd-node1")
				})
				cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, serverErr })
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tt.reactor != nil {
				tt.reactor(cs)
			}
			_, err := newClient(t, cs, tt.node, tt.nodeErr).Create(context.Background(), staticPod("h1"))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), "etcd-node1_kube-system") {
				t.Fatalf("Create error = %v; want one naming the pod and containing %q", err, tt.wantText)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Fatalf("Create error = %v; want errors.Is %v", err, tt.wantIs)
			}
			if errors.Is(err, ErrMirrorHashMismatch) {
				t.Fatalf("Create error = %v must not look like a hash mismatch", err)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	existingUID := types.UID("mirror-uid")
	staleUID := types.UID("stale-uid")
	existing := func() *corev1.Pod {
		p := Build(staticPod("h1"), metav1.OwnerReference{})
		p.UID = existingUID
		return p
	}
	tests := []struct {
		name        string
		objects     []runtime.Object
		fullName    string
		uid         *types.UID
		reactor     func(*fake.Clientset)
		wantDeleted bool
		wantErr     string
		wantGone    bool
	}{
		{name: "deletes without precondition", objects: []runtime.Object{existing()}, fullName: "etcd-node1_kube-system", wantDeleted: true, wantGone: true},
		{name: "deletes with the right UID", objects: []runtime.Object{existing()}, fullName: "etcd-node1_kube-system", uid: &existingUID, wantDeleted: true, wantGone: true},
		{
			name: "stale UID precondition is not deleted, not an error", objects: []runtime.Object{existing()}, fullName: "etcd-node1_kube-system", uid: &staleUID,
			// The tracker ignores preconditions; answer as the apiserver does.
			reactor: func(cs *fake.Clientset) {
				cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					opts := a.(k8stesting.DeleteAction).GetDeleteOptions()
					if opts.Preconditions != nil && *opts.Preconditions.UID != existingUID {
						return true, nil, apierrors.NewConflict(podsResource, "etcd-node1", errors.New("Precondition failed: UID in precondition"))
					}
					return false, nil, nil
				})
			},
		},
		{name: "not found is not deleted, not an error", fullName: "etcd-node1_kube-system"},
		{name: "malformed full name", fullName: "etcd-node1", wantErr: `"etcd-node1"`},
		{
			name: "server error", objects: []runtime.Object{existing()}, fullName: "etcd-node1_kube-system", wantErr: "etcd down",
			reactor: func(cs *fake.Clientset) {
				cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewInternalError(errors.New("etcd down"))
				})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.objects...)
			if tt.reactor != nil {
				tt.reactor(cs)
			}
			deleted, err := newClient(t, cs, testNode(), nil).Delete(context.Background(), tt.fullName, tt.uid)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Delete error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if deleted != tt.wantDeleted {
				t.Errorf("Delete deleted = %v, want %v", deleted, tt.wantDeleted)
			}
			_, getErr := cs.CoreV1().Pods("kube-system").Get(context.Background(), "etcd-node1", metav1.GetOptions{})
			if gone := apierrors.IsNotFound(getErr); len(tt.objects) > 0 && gone != tt.wantGone {
				t.Errorf("pod gone = %v, want %v", gone, tt.wantGone)
			}
		})
	}
}

func TestDeleteUsesZeroGracePeriodAndPrecondition(t *testing.T) {
	cs := fake.NewClientset()
	var got metav1.DeleteOptions
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got = a.(k8stesting.DeleteAction).GetDeleteOptions()
		return true, nil, nil
	})
	uid := types.UID("u1")
	if _, err := newClient(t, cs, testNode(), nil).Delete(context.Background(), "a_b", &uid); err != nil {
		t.Fatal(err)
	}
	if got.GracePeriodSeconds == nil || *got.GracePeriodSeconds != 0 {
		t.Errorf("GracePeriodSeconds = %v, want 0", got.GracePeriodSeconds)
	}
	if got.Preconditions == nil || got.Preconditions.UID == nil || *got.Preconditions.UID != uid {
		t.Errorf("Preconditions = %+v, want UID %s", got.Preconditions, uid)
	}
}

func TestNewRequiresOptions(t *testing.T) {
	nodes := NodeGetterFunc(func(context.Context) (*corev1.Node, error) { return testNode(), nil })
	for name, opts := range map[string]Options{
		"Client":   {NodeName: nodeName, Nodes: nodes},
		"NodeName": {Client: fake.NewClientset(), Nodes: nodes},
		"Nodes":    {Client: fake.NewClientset(), NodeName: nodeName},
	} {
		if _, err := New(opts); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("New without %s: error = %v, want one naming it", name, err)
		}
	}
}

func TestHashHelpers(t *testing.T) {
	static := staticPod("h1")
	if got := StaticPodHash(static); got != "h1" {
		t.Errorf("StaticPodHash = %q", got)
	}
	if _, ok := MirrorPodHash(static); ok {
		t.Errorf("MirrorPodHash(static) says mirror")
	}
	m := Build(static, metav1.OwnerReference{})
	if h, ok := MirrorPodHash(m); !ok || h != "h1" {
		t.Errorf("MirrorPodHash(Build(static)) = %q, %v", h, ok)
	}
}
