package mirrorsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClient records what the reconciler asks of the apiserver.
type fakeClient struct {
	mu        sync.Mutex
	calls     []string
	createErr error
	noDelete  bool
	next      int
}

func (c *fakeClient) Create(_ context.Context, static *corev1.Pod) (*corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "create "+podtypes.PodFullName(static)+" "+podtypes.ConfigHash(static))
	if c.createErr != nil {
		return nil, c.createErr
	}
	c.next++
	m := mirror.Build(static, metav1.OwnerReference{})
	m.UID = types.UID(fmt.Sprintf("m%d", c.next))
	return m, nil
}

func (c *fakeClient) Delete(_ context.Context, fullName string, uid *types.UID) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("delete %s uid=%s", fullName, *uid))
	return !c.noDelete, nil
}

func (c *fakeClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func static(name, hash string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: types.UID("static-" + hash),
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: "file", podtypes.ConfigHashAnnotationKey: hash},
		},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func mirrorOf(p *corev1.Pod, uid string) *corev1.Pod {
	m := mirror.Build(p, metav1.OwnerReference{})
	m.UID = types.UID(uid)
	return m
}

type fixture struct {
	r      *Reconciler
	pods   *podmanager.Manager
	client *fakeClient
	clock  *clocktesting.FakeClock
	rec    *record.FakeRecorder
	ready  bool
	seen   bool
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{pods: podmanager.New(), client: &fakeClient{}, clock: clocktesting.NewFakeClock(time.Unix(1000, 0)), rec: record.NewFakeRecorder(10), ready: true, seen: true}
	r, err := New(Options{Pods: f.pods, SourcesReady: func() bool { return f.ready }, MirrorsSeen: func() bool { return f.seen },
		NodeName: "node1", Recorder: f.rec, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.queue.ShutDown)
	f.r = r
	return f
}

// step reconciles name once and returns the calls it made.
func (f *fixture) step(t *testing.T, name string) ([]string, time.Duration) {
	t.Helper()
	wait, err := f.r.reconcile(context.Background(), f.client, name)
	if err != nil {
		t.Fatalf("reconcile %s: %v", name, err)
	}
	return f.client.take(), wait
}

func same(got []string, want ...string) bool {
	return strings.Join(got, "|") == strings.Join(want, "|")
}

func TestCreatesOnceWhileTheWatchCatchesUp(t *testing.T) {
	f := newFixture(t)
	web := static("web", "h1")
	f.pods.AddPod(web)
	if calls, _ := f.step(t, "web_ns"); !same(calls, "create web_ns h1") {
		t.Fatalf("first reconcile: %v, want one create", calls)
	}
	// Not in the pod manager yet: no second create.
	calls, wait := f.step(t, "web_ns")
	if len(calls) != 0 || wait <= 0 || wait > DefaultCreateExpiry {
		t.Fatalf("second reconcile: %v, look again in %v; want nothing and a wait", calls, wait)
	}
	// The watch never shows it: after the expiry it is created again.
	f.clock.Step(DefaultCreateExpiry)
	if calls, _ := f.step(t, "web_ns"); !same(calls, "create web_ns h1") {
		t.Fatalf("after the expiry: %v, want a create", calls)
	}
	// Shown, then deleted by a user: created again at once.
	f.pods.AddPod(mirrorOf(web, "m2"))
	if calls, _ := f.step(t, "web_ns"); len(calls) != 0 {
		t.Fatalf("with its mirror: %v, want nothing", calls)
	}
	if st := f.r.Mirror(web); st.UID != "m2" || !st.Synced || st.Problem != "" {
		t.Errorf("Mirror = %+v, want synced m2", st)
	}
	gone := mirrorOf(web, "m2")
	f.pods.RemovePod(gone)
	f.r.MirrorGone("web_ns", "m2")
	if calls, _ := f.step(t, "web_ns"); !same(calls, "create web_ns h1") {
		t.Fatalf("after a user deleted it: %v, want a create", calls)
	}
}

// At a start of the agent, the mirrors the apiserver holds are not known
// until its source has sent them: no create (and conflict, and read) before.
func TestNoCreateBeforeTheMirrorsAreKnown(t *testing.T) {
	f := newFixture(t)
	f.seen = false
	f.pods.AddPod(static("web", "h1"))
	if calls, wait := f.step(t, "web_ns"); len(calls) != 0 || wait <= 0 {
		t.Fatalf("before the mirrors are known: %v, look again in %v; want nothing, and a look again", calls, wait)
	}
	f.seen = true
	if calls, _ := f.step(t, "web_ns"); !same(calls, "create web_ns h1") {
		t.Fatalf("once known: %v, want a create", calls)
	}
}

func TestMirrorGoneBeforeTheWatchShowedItIsNotWaitedFor(t *testing.T) {
	f := newFixture(t)
	f.pods.AddPod(static("web", "h1"))
	f.step(t, "web_ns")
	f.r.MirrorGone("web_ns", "m1") // created, and deleted before the reconciler saw it
	if calls, _ := f.step(t, "web_ns"); !same(calls, "create web_ns h1") {
		t.Fatalf("got %v, want a create without waiting for the expiry", calls)
	}
}

func TestReplacesOutdatedAndDeletingMirrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mirror func(*corev1.Pod) *corev1.Pod
	}{
		{"another hash", func(*corev1.Pod) *corev1.Pod { return mirrorOf(static("web", "h0"), "old") }},
		{"being deleted", func(p *corev1.Pod) *corev1.Pod {
			m := mirrorOf(p, "old")
			m.DeletionTimestamp = &metav1.Time{Time: time.Unix(900, 0)}
			return m
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			web := static("web", "h1")
			f.pods.AddPod(web)
			f.pods.AddPod(tc.mirror(web))
			if calls, _ := f.step(t, "web_ns"); !same(calls, "delete web_ns uid=old", "create web_ns h1") {
				t.Fatalf("got %v, want the old one deleted by UID, then a create", calls)
			}
			if st := f.r.Mirror(web); st.Synced {
				t.Errorf("Mirror = %+v while only the old mirror is known", st)
			}
		})
	}
}

func TestOrphansWaitForTheSourcesAndGoByUID(t *testing.T) {
	f := newFixture(t)
	f.ready = false
	f.pods.AddPod(mirrorOf(static("old", "h1"), "m9"))
	if calls, _ := f.step(t, "old_ns"); len(calls) != 0 {
		t.Fatalf("before the sources are ready: %v, want nothing", calls)
	}
	f.ready = true
	if calls, _ := f.step(t, "old_ns"); !same(calls, "delete old_ns uid=m9") {
		t.Fatalf("got %v, want the orphan deleted by UID", calls)
	}
	// An API pod that holds a name is not a static pod: nothing to do.
	api := static("api", "x")
	delete(api.Annotations, podtypes.ConfigSourceAnnotationKey)
	api.Annotations[podtypes.ConfigSourceAnnotationKey] = "api"
	f.pods.AddPod(api)
	if calls, _ := f.step(t, "api_ns"); len(calls) != 0 {
		t.Fatalf("an API pod: %v", calls)
	}
}

func TestFailuresAreReportedUntilASuccess(t *testing.T) {
	f := newFixture(t)
	web := static("web", "h1")
	f.pods.AddPod(web)
	f.client.createErr = errors.New("connection refused")
	_, err := f.r.reconcile(context.Background(), f.client, "web_ns")
	f.r.noteFailure("web_ns", err)
	if st := f.r.Mirror(web); !strings.Contains(st.Problem, "connection refused") {
		t.Fatalf("Mirror = %+v, want the failure", st)
	}
	f.client.createErr = nil
	_, err = f.r.reconcile(context.Background(), f.client, "web_ns")
	f.r.noteFailure("web_ns", err)
	if st := f.r.Mirror(web); st.Problem != "" {
		t.Fatalf("Mirror = %+v after a success", st)
	}
}

func TestRunReconcilesEverythingAndEndsWithItsContext(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"a", "b", "c"} {
		f.pods.AddPod(static(n, "h-"+n))
	}
	f.pods.AddPod(mirrorOf(static("gone", "hg"), "mg"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.r.Run(ctx, f.client) }()
	want := map[string]bool{"create a_ns h-a": true, "create b_ns h-b": true, "create c_ns h-c": true, "delete gone_ns uid=mg": true}
	got := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		for _, c := range f.client.take() {
			got[c] = true
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for c := range want {
		if !got[c] {
			t.Errorf("missing %q; got %v", c, got)
		}
	}
}

// A delete that deleted nothing (a conflict from an apiserver just back,
// say) is not taken for done: no create follows, and the name is looked
// at again soon.
func TestADeleteThatDeletedNothingIsLookedAtAgain(t *testing.T) {
	f := newFixture(t)
	web := static("web", "h1")
	f.pods.AddPod(web)
	f.pods.AddPod(mirrorOf(static("web", "h0"), "old"))
	f.client.noDelete = true
	calls, wait := f.step(t, "web_ns")
	if !same(calls, "delete web_ns uid=old") || wait <= 0 {
		t.Fatalf("got %v and look again in %v; want one delete, no create, and a look again", calls, wait)
	}
	f.pods.AddPod(mirrorOf(static("gone", "hg"), "mg"))
	if calls, wait := f.step(t, "gone_ns"); !same(calls, "delete gone_ns uid=mg") || wait <= 0 {
		t.Fatalf("orphan: got %v and look again in %v; want a delete and a look again", calls, wait)
	}
}
