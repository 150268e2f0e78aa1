package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

type fakeRuntime struct {
	mu     sync.Mutex
	health runtime.Health
	err    error
	calls  atomic.Int32
}

func (f *fakeRuntime) Health(context.Context) (runtime.Health, error) {
	defer f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.health, f.err
}

func (f *fakeRuntime) set(h runtime.Health, err error) {
	f.mu.Lock()
	f.health, f.err = h, err
	f.mu.Unlock()
}

func (f *fakeRuntime) Version() runtime.VersionInfo {
	return runtime.VersionInfo{RuntimeName: "containerd", RuntimeVersion: "1.6.20"}
}

type harness struct {
	t      *testing.T
	client *fake.Clientset
	rt     *fakeRuntime
	clock  *testclock.FakeClock
	node   *Node
	cancel context.CancelFunc
	done   chan error
	// nodeWatches counts the watches of Nodes begun.
	nodeWatches atomic.Int32
}

const testNode = "worker-1"

// start runs a Node against a fake apiserver holding objs; tweak may change
// its options and prepend reactors to the client before it runs.
func start(t *testing.T, objs []any, tweak func(*Options, *fake.Clientset)) *harness {
	t.Helper()
	var objects []runtimeObject
	for _, o := range objs {
		objects = append(objects, o.(runtimeObject))
	}
	h := &harness{t: t, client: fake.NewClientset(toObjects(objects)...), clock: testclock.NewFakeClock(time.Now()),
		rt: &fakeRuntime{health: runtime.Health{RuntimeReady: true, NetworkReady: true}}}
	// The fake clientset gives no UIDs; the apiserver does.
	var uids atomic.Int32
	h.client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtimeObject, error) {
		n := a.(k8stesting.CreateAction).GetObject().(*corev1.Node)
		n.UID = types.UID(fmt.Sprintf("uid-%d", uids.Add(1)))
		return false, nil, nil
	})
	h.client.PrependWatchReactor("nodes", func(k8stesting.Action) (bool, watch.Interface, error) {
		h.nodeWatches.Add(1)
		return false, nil, nil // the tracker's watch, registered before this call returns
	})
	m, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Name: testNode, Runtime: h.rt, Machine: m, RootDir: t.TempDir(),
		Labels: map[string]string{"example.com/role": "edge"}, AgentVersion: "v0.0.0-test", Clock: h.clock, Logger: testr.New(t)}
	if tweak != nil {
		tweak(&opts, h.client)
	}
	if h.node, err = New(opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.node.Run(ctx, h.client) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("Run: %v", err)
	}
	h.cancel = nil
}

// tick advances the clock by d and waits until the status loop has looked
// at the runtime again.
func (h *harness) tick(d time.Duration) {
	h.t.Helper()
	before := h.rt.calls.Load()
	h.clock.Step(d)
	h.eventually("the status loop to run", func() bool { return h.rt.calls.Load() > before })
	// Let it finish the write, if any: the client's actions stay the same
	// for 50 ms (a fixed sleep was too short on a loaded machine).
	last, since := len(h.client.Actions()), time.Now()
	h.eventually("the status loop to settle", func() bool {
		if n := len(h.client.Actions()); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= 50*time.Millisecond
	})
}

func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

func (h *harness) get() *corev1.Node {
	n, err := h.client.CoreV1().Nodes().Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return n
}

func (h *harness) nodeWrites() int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetResource().Resource == "nodes" && (a.GetVerb() == "patch" || a.GetVerb() == "create" || a.GetVerb() == "update") {
			n++
		}
	}
	return n
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func TestNoNodeAPINoWebSocketsDeclared(t *testing.T) {
	h := start(t, nil, nil)
	h.eventually("the Node", func() bool { return h.get() != nil })
	if f := h.get().Status.DeclaredFeatures; len(f) != 0 {
		t.Errorf("declaredFeatures %v without a node API, want none: the apiserver would send it WebSocket streams", f)
	}
}

func TestRegistersTheNodeAndItsLease(t *testing.T) {
	h := start(t, nil, func(o *Options, _ *fake.Clientset) {
		o.Taints = []corev1.Taint{{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}}
		o.APIPort = 10250
	})
	h.eventually("the Node", func() bool { return h.get() != nil })
	n := h.get()
	for k, v := range map[string]string{corev1.LabelHostname: testNode, corev1.LabelOSStable: "linux", "example.com/role": "edge"} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	if c := condition(n, corev1.NodeReady); c.Status != corev1.ConditionTrue || c.LastHeartbeatTime.IsZero() {
		t.Errorf("Ready %+v", c)
	}
	for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := condition(n, typ); c.Status != corev1.ConditionFalse {
			t.Errorf("%s %+v on a healthy test machine", typ, c)
		}
	}
	if q := n.Status.Capacity[corev1.ResourcePods]; q.Value() != 110 {
		t.Errorf("pods capacity %s", q.String())
	}
	if n.Status.NodeInfo.ContainerRuntimeVersion != "containerd://1.6.20" || n.Status.NodeInfo.KubeletVersion != "v0.0.0-test" || n.Status.NodeInfo.BootID == "" {
		t.Errorf("nodeInfo %+v", n.Status.NodeInfo)
	}
	if p := n.Status.DaemonEndpoints.KubeletEndpoint.Port; p != 10250 {
		t.Errorf("daemonEndpoints report port %d, want the node API's 10250", p)
	}
	if f := n.Status.DeclaredFeatures; len(f) != 1 || f[0] != "ExtendWebSocketsToKubelet" {
		t.Errorf("declaredFeatures %v, want the node API's WebSocket streams declared", f)
	}
	h.eventually("the Lease", func() bool {
		l, err := h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), testNode, metav1.GetOptions{})
		return err == nil && len(l.OwnerReferences) == 1 && l.OwnerReferences[0].UID == n.UID && *l.Spec.LeaseDurationSeconds == 40
	})
}

func TestWritesOnlyChangesAndTheReport(t *testing.T) {
	h := start(t, nil, nil)
	h.eventually("the Node", func() bool { return h.get() != nil })
	// The watch's list (done before its watch begins) asks for a
	// heartbeat, as after an outage, written at a tick: that write is not
	// one of those counted here.
	h.eventually("the watch's list", func() bool { return h.nodeWatches.Load() > 0 })
	h.eventually("its heartbeat written", func() bool {
		h.node.mu.Lock()
		due := h.node.heartbeatDue
		h.node.mu.Unlock()
		if due {
			h.tick(10 * time.Second)
		}
		return !due
	})
	writes := h.nodeWrites()
	for range 5 {
		h.tick(10 * time.Second)
	}
	if got := h.nodeWrites(); got != writes {
		t.Errorf("%d Node writes in 50 s with nothing changed", got-writes)
	}

	h.rt.set(runtime.Health{RuntimeReady: true, NetworkReady: false, NetworkProblem: "NetworkPluginNotReady: cni config uninitialized"}, nil)
	h.tick(10 * time.Second)
	h.eventually("Ready=False", func() bool {
		c := condition(h.get(), corev1.NodeReady)
		return c.Status == corev1.ConditionFalse && c.Reason == reasonNetworkNotReady
	})
	writes = h.nodeWrites()

	h.rt.set(runtime.Health{}, errors.New("connection refused"))
	h.tick(10 * time.Second)
	h.eventually("Ready=False for the runtime", func() bool { return condition(h.get(), corev1.NodeReady).Reason == reasonRuntimeNotReady })
	h.rt.set(runtime.Health{RuntimeReady: true, NetworkReady: true}, nil)
	h.tick(10 * time.Second)
	h.eventually("Ready=True", func() bool { return condition(h.get(), corev1.NodeReady).Status == corev1.ConditionTrue })
	if got := h.nodeWrites() - writes; got != 2 {
		t.Errorf("%d Node writes for two changes", got)
	}

	// Nothing changes for five minutes: one report, as a heartbeat.
	writes = h.nodeWrites()
	before := condition(h.get(), corev1.NodeReady).LastHeartbeatTime
	for range 30 {
		h.tick(10 * time.Second)
	}
	if got := h.nodeWrites() - writes; got != 1 {
		t.Errorf("%d Node writes in 5 minutes of no change, want the one report", got)
	}
	if after := condition(h.get(), corev1.NodeReady).LastHeartbeatTime; !after.After(before.Time) {
		t.Errorf("the report did not move the heartbeat (%v -> %v)", before, after)
	}
}

func TestRegistersAgainWhenDeleted(t *testing.T) {
	// The Node exists from the start, so that the watch's first list has
	// it: the fake clientset's watch does not replay what happened between
	// its list and its watch, as the apiserver's does.
	h := start(t, []any{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: "first"}}}, nil)
	h.eventually("the Node", func() bool { return h.get() != nil })
	// Deleted before the watch begins, the Node would be seen gone only at
	// the next status write.
	h.eventually("the Node watched", func() bool { return h.nodeWatches.Load() > 0 })
	first := h.get().UID
	if err := h.client.CoreV1().Nodes().Delete(context.Background(), testNode, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch tells the agent at once; no tick is needed.
	h.eventually("the Node again", func() bool { n := h.get(); return n != nil && n.UID != first })
}

func TestAdoptsAnExistingNode(t *testing.T) {
	existing := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: "admin-made", Labels: map[string]string{"team": "a"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "kept", Effect: corev1.TaintEffectNoSchedule}}},
	}
	h := start(t, []any{existing}, func(o *Options, _ *fake.Clientset) {
		o.Taints = []corev1.Taint{{Key: "ignored", Effect: corev1.TaintEffectNoSchedule}}
	})
	h.eventually("the adopted Node's status", func() bool {
		n := h.get()
		return condition(n, corev1.NodeReady).Status == corev1.ConditionTrue
	})
	n := h.get()
	if n.UID != "admin-made" || n.Labels["team"] != "a" || n.Labels["example.com/role"] != "edge" || n.Labels[corev1.LabelHostname] != testNode {
		t.Errorf("adopted Node %s labels %v", n.UID, n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "kept" {
		t.Errorf("taints %v: an adopted Node's taints are not the agent's to change", n.Spec.Taints)
	}
}

func TestRetriesWithBackoffWhileTheAPIServerFails(t *testing.T) {
	var creates atomic.Int32
	h := start(t, nil, func(_ *Options, c *fake.Clientset) {
		c.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtimeObject, error) {
			creates.Add(1)
			return true, nil, errors.New("connection refused")
		})
	})
	time.Sleep(300 * time.Millisecond)
	// Real time passes but the fake clock does not: the retry waits on it.
	if n := creates.Load(); n != 1 {
		t.Errorf("%d attempts without the clock moving, want 1", n)
	}
	h.clock.Step(200 * time.Millisecond)
	h.eventually("a second attempt", func() bool { return creates.Load() == 2 })
	h.clock.Step(200 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	if n := creates.Load(); n != 2 {
		t.Errorf("%d attempts: the second retry came before its doubled delay", n)
	}
}

type runtimeObject = k8sruntime.Object

func toObjects(objs []runtimeObject) []k8sruntime.Object { return objs }

// A relist means the watch lost the apiserver: the status is written once
// at once, a fresh heartbeat, though nothing changed.
func TestARelistWritesAHeartbeat(t *testing.T) {
	h := start(t, nil, nil)
	h.eventually("the Node", func() bool { return h.get() != nil })
	h.tick(10 * time.Second)
	writes := h.nodeWrites()
	h.tick(10 * time.Second)
	if got := h.nodeWrites(); got != writes {
		t.Fatalf("%d writes with nothing changed", got-writes)
	}
	if err := (&nodeStore{n: h.node}).Replace([]any{h.get()}, "999999"); err != nil {
		t.Fatal(err)
	}
	h.eventually("one heartbeat", func() bool { return h.nodeWrites() == writes+1 })
	h.tick(10 * time.Second)
	if got := h.nodeWrites(); got != writes+1 {
		t.Errorf("%d writes after the relist, want 1", got-writes)
	}
}

// After an outage the watch may go on from where it was, without a
// relist: an apiserver that answers the watch again after it refused it
// is enough for a fresh heartbeat.
func TestAWatchThatAnswersAgainWritesAHeartbeat(t *testing.T) {
	var (
		mu       sync.Mutex
		current  *watch.FakeWatcher
		refusals int
		backs    atomic.Int32
	)
	h := start(t, nil, func(o *Options, c *fake.Clientset) {
		o.OnAPIServerBack = func() { backs.Add(1) }
		c.PrependWatchReactor("nodes", func(k8stesting.Action) (bool, watch.Interface, error) {
			mu.Lock()
			defer mu.Unlock()
			if refusals > 0 {
				refusals--
				return true, nil, syscall.ECONNREFUSED
			}
			current = watch.NewFake()
			return true, current, nil
		})
	})
	h.eventually("the Node", func() bool { return h.get() != nil })
	h.eventually("the watch", func() bool { mu.Lock(); defer mu.Unlock(); return current != nil })
	h.eventually("the first list's heartbeat written", func() bool {
		h.node.mu.Lock()
		due := h.node.heartbeatDue
		h.node.mu.Unlock()
		if due {
			h.tick(10 * time.Second)
		}
		return !due
	})
	h.tick(10 * time.Second)
	writes, lists, backsBefore := h.nodeWrites(), h.nodeLists(), backs.Load()

	// The apiserver goes away: the watch ends and two attempts to watch
	// again are refused; the third is answered.
	mu.Lock()
	refusals = 2
	ended := current
	mu.Unlock()
	ended.Modify(h.get()) // a watch that saw nothing is taken for a broken one, and relisted
	ended.Stop()
	h.eventually("the watch again", func() bool { mu.Lock(); defer mu.Unlock(); return refusals == 0 && current != ended })
	h.eventually("one heartbeat", func() bool { return h.nodeWrites() == writes+1 })
	if got := h.nodeLists(); got != lists {
		t.Fatalf("the watch listed the Node again (%d lists): this test is about a watch that goes on without one", got-lists)
	}
	if got := backs.Load() - backsBefore; got != 1 {
		t.Errorf("OnAPIServerBack called %d times when the watch was answered again, want 1", got)
	}
	h.tick(10 * time.Second)
	if got := h.nodeWrites(); got != writes+1 {
		t.Errorf("%d writes after the watch came back, want 1", got-writes)
	}
}

func (h *harness) nodeLists() int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetResource().Resource == "nodes" && a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// Lease renewals that keep failing call OnRepeatedHeartbeatFailure, which
// the command uses to close the client's connections.
func TestRepeatedLeaseFailuresAreReported(t *testing.T) {
	var failing, reported atomic.Bool
	h := start(t, nil, func(o *Options, c *fake.Clientset) {
		o.LeaseDuration = 4 // renewed every second
		o.OnRepeatedHeartbeatFailure = func() { reported.Store(true) }
		c.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtimeObject, error) {
			if failing.Load() {
				return true, nil, errors.New("connection reset by peer")
			}
			return false, nil, nil
		})
	})
	h.eventually("the Lease", func() bool {
		_, err := h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), testNode, metav1.GetOptions{})
		return err == nil
	})
	if reported.Load() {
		t.Fatal("a failure reported while the Lease renews")
	}
	failing.Store(true)
	h.eventually("the failures reported", reported.Load)
}
