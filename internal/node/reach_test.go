package node

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"
)

func TestWhatIsAnAnswer(t *testing.T) {
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{apierrors.NewNotFound(gr, "worker-1"), true},
		{apierrors.NewConflict(gr, "worker-1", errors.New("changed")), true},
		{apierrors.NewForbidden(gr, "worker-1", errors.New("no")), true},
		{syscall.ECONNREFUSED, false},
		{context.DeadlineExceeded, false},
		{apierrors.NewServiceUnavailable("starting"), false},
		{apierrors.NewInternalError(errors.New("etcd")), false},
		{apierrors.NewTooManyRequests("later", 1), false},
	} {
		if got := isAnswer(tc.err); got != tc.want {
			t.Errorf("isAnswer(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// The first answer after a failure, and only that one, is the return.
func TestReachTellsTheFirstAnswerAfterAFailure(t *testing.T) {
	r := reach{wentAway: make(chan struct{}, 1)}
	steps := []struct {
		err      error
		wantBack bool
	}{
		{nil, false},
		{syscall.ECONNREFUSED, false},
		{syscall.ECONNREFUSED, false},
		{nil, true},
		{nil, false},
		{apierrors.NewServiceUnavailable("starting"), false},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "n"), true},
	}
	for i, s := range steps {
		if got := r.answered(s.err); got != s.wantBack {
			t.Errorf("step %d (%v): back = %v, want %v", i, s.err, got, s.wantBack)
		}
	}
	// Each outage woke the probe once: the channel holds one wake-up.
	select {
	case <-r.wentAway:
	default:
		t.Error("a failure did not wake the probe")
	}
}

// While the apiserver is away the Node asks /readyz every probePeriod;
// the first "ok" tells OnAPIServerBack.
func TestProbesReadyzWhileAway(t *testing.T) {
	var ready atomic.Bool
	var probes atomic.Int32
	readyz := func(context.Context) bool {
		probes.Add(1)
		return ready.Load()
	}
	clock := testclock.NewFakeClock(time.Now())
	var backs atomic.Int32
	n, err := New(Options{Name: testNode, Runtime: &fakeRuntime{}, Machine: Machine{}, RootDir: t.TempDir(), Clock: clock,
		Logger: testr.New(t), OnAPIServerBack: func() { backs.Add(1) }, Readyz: readyz})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.probeWhileAway(ctx) }()
	defer func() { cancel(); <-done }()

	// probe steps the clock once the probe waits, and waits for its ask.
	probe := func() {
		t.Helper()
		before := probes.Load()
		eventually(t, "the probe to wait", clock.HasWaiters)
		clock.Step(probePeriod)
		eventually(t, "a probe", func() bool { return probes.Load() > before })
	}
	if clock.HasWaiters() || probes.Load() != 0 {
		t.Fatal("the probe runs while the apiserver answers")
	}
	n.noteAnswer(syscall.ECONNREFUSED)
	probe()
	probe()
	if backs.Load() != 0 {
		t.Fatal("OnAPIServerBack called while /readyz was not ok")
	}
	ready.Store(true)
	probe()
	eventually(t, "OnAPIServerBack", func() bool { return backs.Load() == 1 })
	// Back: no more probes until a request fails again.
	eventually(t, "the probe to stop", func() bool { return !n.reach.away.Load() && !clock.HasWaiters() })
}

// The Lease's requests tell the Node whether it renews; a request whose
// context ended (the controller started over) tells nothing.
func TestLeaseRequestsTellTheNode(t *testing.T) {
	var refuse atomic.Bool
	c := fake.NewClientset()
	c.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtimeObject, error) {
		if refuse.Load() {
			return true, nil, syscall.ECONNREFUSED
		}
		return false, nil, nil
	})
	var backs atomic.Int32
	n, err := New(Options{Name: testNode, Runtime: &fakeRuntime{}, Machine: Machine{}, RootDir: t.TempDir(),
		Logger: testr.New(t), OnAPIServerBack: func() { backs.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	var stops atomic.Int32
	n.stopLease = func() { stops.Add(1) }
	leases := leaseClient{Interface: c, n: n}.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	ctx := context.Background()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: testNode, Namespace: corev1.NamespaceNodeLease}}

	if _, err := leases.Get(ctx, testNode, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get: %v, want NotFound", err)
	}
	if n.leaseFailing.Load() || n.reach.away.Load() {
		t.Fatal("a NotFound was taken for a failure")
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.restartLease()
	if stops.Load() != 0 {
		t.Fatal("a Lease that renews was started over")
	}

	refuse.Store(true)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err == nil {
		t.Fatal("the refused Update succeeded")
	}
	if !n.leaseFailing.Load() || !n.reach.away.Load() {
		t.Fatal("a refused renewal was not noted")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	refuse.Store(false)
	_, _ = leases.Get(canceled, testNode, metav1.GetOptions{})
	if !n.leaseFailing.Load() || backs.Load() != 0 {
		t.Fatal("a request whose context ended was taken for an answer")
	}
	// The apiserver answers another request first: the failing Lease
	// renewal starts over.
	n.noteAnswer(nil)
	if stops.Load() != 1 || backs.Load() != 1 {
		t.Fatalf("after the return: %d restarts of the Lease, %d OnAPIServerBack; want 1 and 1", stops.Load(), backs.Load())
	}
	// The Lease's own answer clears its failure without a restart.
	refuse.Store(true)
	_, _ = leases.Update(ctx, lease, metav1.UpdateOptions{})
	refuse.Store(false)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n.leaseFailing.Load() || stops.Load() != 1 || backs.Load() != 2 {
		t.Fatalf("after the Lease's own answer: failing %v, %d restarts, %d OnAPIServerBack; want false, 1, 2",
			n.leaseFailing.Load(), stops.Load(), backs.Load())
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
