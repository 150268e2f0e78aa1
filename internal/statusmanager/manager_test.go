package statusmanager

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func staticPod(hash string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-node1", Namespace: "ns", UID: types.UID("static-" + hash),
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: "file", podtypes.ConfigHashAnnotationKey: hash},
		},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func mirrorOf(p *corev1.Pod, uid, rv string) *corev1.Pod {
	m := mirror.Build(p, metav1.OwnerReference{})
	m.UID, m.ResourceVersion = types.UID(uid), rv
	m.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}
	return m
}

// running is a status with times finer than a second, as the agent makes them.
func running(ready corev1.ConditionStatus, at time.Time) corev1.PodStatus {
	t := metav1.NewTime(at)
	return corev1.PodStatus{
		Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort, StartTime: &t,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: t},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: ready == corev1.ConditionTrue,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}}},
	}
}

type fixture struct {
	m        *Manager
	pods     *podmanager.Manager
	statuses *status.Store
	client   *fake.Clientset
	clock    *clocktesting.FakeClock

	mu      sync.Mutex
	patches []map[string]any
	written []told
}

// told is a call of Options.Written.
type told struct {
	uid types.UID
	gen uint64
}

func newFixture(t *testing.T, objects ...runtime.Object) *fixture {
	f := &fixture{pods: podmanager.New(), clock: clocktesting.NewFakeClock(time.Unix(1000, 500_000_000))}
	f.statuses = status.NewStore()
	f.client = fake.NewClientset(objects...)
	f.client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var p map[string]any
		if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p); err != nil {
			t.Errorf("patch is not JSON: %v", err)
		}
		f.mu.Lock()
		f.patches = append(f.patches, p)
		f.mu.Unlock()
		return false, nil, nil // and let the tracker apply it
	})
	m, err := New(Options{Pods: f.pods, Statuses: f.statuses, Clock: f.clock, Written: func(uid types.UID, gen uint64) {
		f.mu.Lock()
		f.written = append(f.written, told{uid, gen})
		f.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.queue.ShutDown)
	f.m = m
	return f
}

func (f *fixture) sync(t *testing.T, uid types.UID) {
	t.Helper()
	if err := f.m.sync(context.Background(), f.client.CoreV1(), uid); err != nil {
		t.Fatalf("sync: %v", err)
	}
}

func (f *fixture) takePatches() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.patches
	f.patches = nil
	return out
}

// observe makes the pod manager hold the mirror as the watch shows it now.
func (f *fixture) observe(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p, err := f.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.pods.UpdatePod(p)
	return p
}

func TestWritesTheStaticPodsStatusOntoItsMirrorOnce(t *testing.T) {
	web := staticPod("h1")
	m := mirrorOf(web, "mirror-1", "5")
	f := newFixture(t, m)
	f.pods.AddPod(web)
	f.pods.AddPod(m)

	f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	f.sync(t, web.UID)
	patches := f.takePatches()
	if len(patches) != 1 {
		t.Fatalf("%d patches, want 1", len(patches))
	}
	if uid := patches[0]["metadata"].(map[string]any)["uid"]; uid != "mirror-1" {
		t.Errorf("patch precondition uid = %v, want the mirror's", uid)
	}
	if target, synced := f.m.Synced(web.UID); target != "mirror-1" || !synced {
		t.Errorf("Synced = %s, %v", target, synced)
	}
	// Nothing changed: nothing is written, before or after the watch shows
	// the write (at second precision).
	f.sync(t, web.UID)
	got := f.observe(t, "ns", "web-node1")
	if got.Status.Phase != corev1.PodRunning || got.Status.StartTime.Time != f.clock.Now().Truncate(time.Second) {
		t.Fatalf("stored status = %+v", got.Status)
	}
	f.clock.Step(time.Minute)
	f.sync(t, web.UID)
	f.m.Resync()
	if n := f.m.queue.Len(); n != 0 {
		t.Errorf("resync queued %d pods with nothing to write", n)
	}
	if p := f.takePatches(); len(p) != 0 {
		t.Fatalf("unchanged status written again: %v", p)
	}

	// A readiness change is one patch with the changed condition only.
	f.statuses.Set(web, running(corev1.ConditionFalse, f.clock.Now().Add(-time.Minute)))
	f.sync(t, web.UID)
	patches = f.takePatches()
	if len(patches) != 1 {
		t.Fatalf("%d patches, want 1", len(patches))
	}
	st := patches[0]["status"].(map[string]any)
	if conds := st["conditions"].([]any); len(conds) != 1 || conds[0].(map[string]any)["type"] != "Ready" {
		t.Errorf("patch conditions = %v, want Ready only", conds)
	}
	if _, ok := st["phase"]; ok {
		t.Errorf("patch carries the unchanged phase: %v", st)
	}
}

func TestNoTargetNoWrite(t *testing.T) {
	web := staticPod("h2")
	f := newFixture(t)
	f.pods.AddPod(web)
	f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	f.sync(t, web.UID) // no mirror yet
	f.pods.AddPod(mirrorOf(staticPod("h1"), "old", "3"))
	f.sync(t, web.UID) // the mirror of another version
	deleting := mirrorOf(web, "m", "4")
	deleting.DeletionTimestamp = &metav1.Time{Time: f.clock.Now()}
	f.pods.UpdatePod(deleting)
	f.sync(t, web.UID) // a mirror being deleted
	if p := f.takePatches(); len(p) != 0 {
		t.Fatalf("written without a current mirror: %v", p)
	}
	if _, synced := f.m.Synced(web.UID); synced {
		t.Error("Synced without a mirror")
	}
}

func TestDriftIsRepairedAtResync(t *testing.T) {
	web := staticPod("h1")
	m := mirrorOf(web, "mirror-1", "5")
	f := newFixture(t, m)
	f.pods.AddPod(web)
	f.pods.AddPod(m)
	f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	f.sync(t, web.UID)
	f.takePatches()

	// Someone else writes the status; the watch shows it well after the
	// agent's write.
	f.clock.Step(time.Minute)
	other := f.observe(t, "ns", "web-node1").DeepCopy()
	other.Status.Phase = corev1.PodFailed
	other.ResourceVersion = "99"
	f.pods.UpdatePod(other)
	f.m.Resync()
	if n := f.m.queue.Len(); n != 1 {
		t.Fatalf("resync queued %d pods, want the drifted one", n)
	}
	f.sync(t, web.UID)
	patches := f.takePatches()
	if len(patches) != 1 || patches[0]["status"].(map[string]any)["phase"] != "Running" {
		t.Fatalf("patches = %v, want the phase put back", patches)
	}
}

func TestRunWritesQueuedStatusesAndEnds(t *testing.T) {
	web := staticPod("h1")
	m := mirrorOf(web, "mirror-1", "5")
	f := newFixture(t, m)
	f.pods.AddPod(web)
	f.pods.AddPod(m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.m.Run(ctx, f.client.CoreV1()) }()
	f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	f.m.Enqueue(web.UID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, synced := f.m.Synced(web.UID); synced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("status not written by Run")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func apiPod(uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "ns", UID: types.UID(uid), ResourceVersion: "7"},
		Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestDeletesAFinishedAPIPodOnceItsFinalStatusIsWritten(t *testing.T) {
	pod := apiPod("u1")
	now := metav1.NewTime(time.Unix(2000, 0))
	grace := int64(30)
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, &grace
	f := newFixture(t, pod)
	finished := map[types.UID]bool{}
	f.m.opts.Finished = func(uid types.UID) bool { return finished[uid] }
	var deletes []k8stesting.DeleteActionImpl
	f.client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		deletes = append(deletes, a.(k8stesting.DeleteActionImpl))
		return false, nil, nil
	})
	f.pods.AddPod(pod)
	final := corev1.PodStatus{Phase: corev1.PodFailed, QOSClass: corev1.PodQOSBestEffort}

	// Still terminating: the status is written, the pod stays.
	f.statuses.Set(pod, corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort})
	f.sync(t, pod.UID)
	if len(deletes) != 0 {
		t.Fatalf("deleted before it finished: %v", deletes)
	}
	// Finished, and the final status differs: written first, then deleted.
	finished[pod.UID] = true
	f.statuses.Set(pod, final)
	f.sync(t, pod.UID)
	if p := f.takePatches(); len(p) != 2 || p[1]["status"].(map[string]any)["phase"] != "Failed" {
		t.Errorf("patches = %v, want the final status written before the deletion", p)
	}
	if len(deletes) != 1 {
		t.Fatalf("%d deletes, want 1", len(deletes))
	}
	opts := deletes[0].DeleteOptions
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil || *opts.Preconditions.UID != pod.UID {
		t.Errorf("delete options = %+v, want grace 0 and the pod's UID as precondition", opts)
	}
	if _, err := f.client.CoreV1().Pods("ns").Get(context.Background(), "api", metav1.GetOptions{}); err == nil {
		t.Error("the pod is still in the apiserver")
	}
	// Gone already (the watch has not said so yet): no error, no retry.
	f.sync(t, pod.UID)
}

func TestNeverDeletesAPodNotBeingDeletedOrAMirror(t *testing.T) {
	pod := apiPod("u2")
	web := staticPod("h1")
	m := mirrorOf(web, "mirror-1", "5")
	now := metav1.NewTime(time.Unix(2000, 0))
	m.DeletionTimestamp = &now
	f := newFixture(t, pod, m)
	f.m.opts.Finished = func(types.UID) bool { return true }
	deletes := 0
	f.client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		deletes++
		return false, nil, nil
	})
	f.pods.AddPod(pod)
	f.pods.AddPod(web)
	f.pods.AddPod(m)
	f.statuses.Set(pod, corev1.PodStatus{Phase: corev1.PodSucceeded, QOSClass: corev1.PodQOSBestEffort})
	f.statuses.Set(web, corev1.PodStatus{Phase: corev1.PodSucceeded, QOSClass: corev1.PodQOSBestEffort})
	f.sync(t, pod.UID)
	f.sync(t, web.UID)
	if deletes != 0 {
		t.Fatalf("%d deletes of a pod whose deletion nobody asked for, or of a mirror", deletes)
	}
}

// A condition someone else set in the apiserver (a readiness gate's) is
// never removed by the agent's writes, whether the agent's status carries
// it, an older value of it, or nothing of it.
func TestKeepsConditionsOthersOwn(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	withGate := func(s corev1.ConditionStatus) *corev1.Pod {
		p := apiPod("u3")
		p.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: s}}
		return p
	}
	for _, tc := range []struct {
		name string
		// agentSaw is the gate's status in the agent's copy of the pod
		// when it generated its status; "" for none.
		agentSaw corev1.ConditionStatus
	}{
		{"the agent's status lacks it", ""},
		{"the agent's status has an older value", corev1.ConditionFalse},
		{"the agent's status has the same value", corev1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := withGate(corev1.ConditionTrue)
			f := newFixture(t, pod)
			f.pods.AddPod(pod)
			st := running(corev1.ConditionFalse, f.clock.Now())
			if tc.agentSaw != "" {
				st.Conditions = append([]corev1.PodCondition{{Type: gate, Status: tc.agentSaw}}, st.Conditions...)
			}
			f.statuses.Set(pod, st)
			f.sync(t, pod.UID)
			got := f.observe(t, "ns", "api")
			var types []string
			for _, c := range got.Status.Conditions {
				types = append(types, string(c.Type)+"="+string(c.Status))
			}
			want := []string{"example.com/gate=True", "PodScheduled=True", "Ready=False"}
			if diff := cmp.Diff(want, types); diff != "" {
				t.Errorf("conditions in the apiserver (-want +got):\n%s", diff)
			}
			// Nothing is left to write: the resync finds no drift.
			f.clock.Step(time.Minute)
			f.m.Resync()
			if n := f.m.queue.Len(); n != 0 {
				t.Errorf("resync queued %d pods; the merged status should match", n)
			}
		})
	}
}

// The DisruptionTarget of a pod the node evicted reaches the apiserver,
// replacing one a controller set, once the pod has finished; before, the
// controller's stays.
func TestWritesTheEvictionsDisruptionTargetOnceFinished(t *testing.T) {
	pod := apiPod("u4")
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager"}}
	f := newFixture(t, pod)
	f.pods.AddPod(pod)
	ours := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet, Message: "The node was low on resource: memory. "}
	reason := func() string {
		t.Helper()
		for _, c := range f.observe(t, "ns", "api").Status.Conditions {
			if c.Type == corev1.DisruptionTarget {
				return c.Reason
			}
		}
		return ""
	}
	st := running(corev1.ConditionFalse, f.clock.Now())
	st.Conditions = append(st.Conditions, ours)
	f.statuses.Set(pod, st)
	f.sync(t, pod.UID)
	if got := reason(); got != "DeletionByTaintManager" {
		t.Errorf("DisruptionTarget reason %q while the pod runs, want the controller's", got)
	}
	st = *st.DeepCopy()
	st.Phase, st.Reason = corev1.PodFailed, "Evicted"
	f.statuses.Set(pod, st)
	f.sync(t, pod.UID)
	if got := reason(); got != corev1.PodReasonTerminationByKubelet {
		t.Errorf("DisruptionTarget reason %q once failed, want %s", got, corev1.PodReasonTerminationByKubelet)
	}
}

func (f *fixture) takeWritten() []told {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.written
	f.written = nil
	return out
}

func TestTellsWhichGenerationTheAPIServerHolds(t *testing.T) {
	web := staticPod("h1")
	m := mirrorOf(web, "mirror-1", "5")
	f := newFixture(t, m)
	f.pods.AddPod(web)

	// No target yet: nothing written, nothing told.
	first := f.statuses.Set(web, running(corev1.ConditionFalse, f.clock.Now()))
	f.sync(t, web.UID)
	if got := f.takeWritten(); len(got) != 0 {
		t.Fatalf("told %v without a mirror to write to", got)
	}

	f.pods.AddPod(m)
	f.sync(t, web.UID)
	if got, want := f.takeWritten(), []told{{web.UID, first}}; !slices.Equal(got, want) {
		t.Fatalf("after the write told %v, want %v", got, want)
	}

	// A newer generation, then a status the mirror already holds (the
	// change undone before it was written): told at once, with no patch.
	ready := f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	undone := f.statuses.Set(web, running(corev1.ConditionFalse, f.clock.Now()))
	if !(first < ready && ready < undone) {
		t.Fatalf("generations %d, %d, %d do not grow", first, ready, undone)
	}
	f.takePatches()
	f.sync(t, web.UID)
	if p := f.takePatches(); len(p) != 0 {
		t.Errorf("patched %v for a status the mirror holds", p)
	}
	if got, want := f.takeWritten(), []told{{web.UID, undone}}; !slices.Equal(got, want) {
		t.Fatalf("with the status already there told %v, want %v", got, want)
	}

	// A failed write tells nothing.
	f.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver away")
	})
	f.statuses.Set(web, running(corev1.ConditionTrue, f.clock.Now()))
	if err := f.m.sync(context.Background(), f.client.CoreV1(), web.UID); err == nil {
		t.Fatal("sync did not fail")
	}
	if got := f.takeWritten(); len(got) != 0 {
		t.Errorf("told %v of a failed write", got)
	}
}
