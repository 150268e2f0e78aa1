package tokens

import (
	"fmt"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

// call is one TokenRequest the fake apiserver received.
type call struct {
	namespace, serviceAccount string
	spec                      authenticationv1.TokenRequestSpec
}

// fixture is a Manager over a fake clientset whose token subresource
// answers like the apiserver: a new token per request, expiring
// expirationSeconds after the fake clock's now.
type fixture struct {
	clock *testingclock.FakeClock
	m     *Manager

	mu    sync.Mutex
	calls []call
	// fail, if set, is returned instead of a token.
	fail error
	// respond, if set, replaces the answer.
	respond func(*authenticationv1.TokenRequest)
	// gate, if set, holds each request until it is closed; entered is
	// told of each request held.
	gate    chan struct{}
	entered chan struct{}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: testingclock.NewFakeClock(t0)}
	client := fake.NewClientset()
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		create := a.(k8stesting.CreateActionImpl)
		req := create.Object.(*authenticationv1.TokenRequest)
		f.mu.Lock()
		gate, entered := f.gate, f.entered
		f.mu.Unlock()
		if gate != nil {
			entered <- struct{}{}
			<-gate
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, call{a.GetNamespace(), create.Name, *req.Spec.DeepCopy()})
		if f.fail != nil {
			return true, nil, f.fail
		}
		out := req.DeepCopy()
		out.Status = authenticationv1.TokenRequestStatus{
			Token:               fmt.Sprintf("token-%d", len(f.calls)),
			ExpirationTimestamp: metav1.NewTime(f.clock.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second)),
		}
		if f.respond != nil {
			f.respond(out)
		}
		return true, out, nil
	})
	m, err := New(Options{Client: client, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

func (f *fixture) set(fn func(f *fixture)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fixture) requests() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// token asks for p's token for pod and fails the test on an error.
func (f *fixture) token(t *testing.T, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) string {
	t.Helper()
	tok, err := f.m.Token(t.Context(), pod, p)
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	return tok
}

// tokenAsync is token for other goroutines than the test's.
func (f *fixture) tokenAsync(t *testing.T, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) string {
	tok, err := f.m.Token(t.Context(), pod, p)
	if err != nil {
		t.Errorf("Token: %v", err)
	}
	return tok
}

// wantRequests fails the test unless the apiserver got n requests so far.
func (f *fixture) wantRequests(t *testing.T, n int) {
	t.Helper()
	if got := len(f.requests()); got != n {
		t.Fatalf("the apiserver got %d token requests, want %d", got, n)
	}
}

func testPod(name, serviceAccount string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID(name + "-uid")},
		Spec:       corev1.PodSpec{ServiceAccountName: serviceAccount, NodeName: "node-a"},
	}
}

func projection(audience string, seconds int64) *corev1.ServiceAccountTokenProjection {
	p := &corev1.ServiceAccountTokenProjection{Path: "token", Audience: audience}
	if seconds != 0 {
		p.ExpirationSeconds = &seconds
	}
	return p
}
