package runtimeclass

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func class(name, handler string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
}

// Before the first read no class resolves (after a bounded wait); once
// read, a class gives its handler, a missing one the kubelet's NotFound,
// and a class created or deleted later is seen.
func TestHandler(t *testing.T) {
	c := New(Options{SyncWait: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if h, err := c.Handler(ctx, ""); err != nil || h != "" {
		t.Fatalf("no class before Run: %q, %v; want the default handler", h, err)
	}
	if _, err := c.Handler(ctx, "gvisor"); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("a class before Run: err = %v, want ErrNotSynced", err)
	}

	client := fake.NewClientset(class("gvisor", "runsc"), class("plain", "runc"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, client) }()
	c.opts.SyncWait = 10 * time.Second
	for _, tc := range []struct {
		name, want string
		notFound   bool
	}{
		{name: "", want: ""},
		{name: "gvisor", want: "runsc"},
		{name: "plain", want: "runc"},
		{name: "missing", notFound: true},
	} {
		got, err := c.Handler(ctx, tc.name)
		switch {
		case tc.notFound && (!apierrors.IsNotFound(err) || err.Error() != `runtimeclass.node.k8s.io "missing" not found`):
			t.Errorf("class %q: err = %v, want the kubelet's NotFound", tc.name, err)
		case !tc.notFound && (err != nil || got != tc.want):
			t.Errorf("class %q: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}

	rcs := client.NodeV1().RuntimeClasses()
	if _, err := rcs.Create(ctx, class("late", "kata"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rcs.Delete(ctx, "gvisor", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		late, errLate := c.Handler(ctx, "late")
		_, errGone := c.Handler(ctx, "gvisor")
		if errLate == nil && late == "kata" && apierrors.IsNotFound(errGone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the changes: late %q %v, deleted %v", late, errLate, errGone)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSlim(t *testing.T) {
	in := class("gvisor", "runsc")
	in.Labels = map[string]string{"a": "b"}
	in.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}
	in.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"x": "y"}}
	out, err := slim(in)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*nodev1.RuntimeClass)
	if got.Name != "gvisor" || got.Handler != "runsc" || got.Overhead != nil || got.Scheduling != nil || got.Labels != nil {
		t.Errorf("slim = %+v", got)
	}
}
