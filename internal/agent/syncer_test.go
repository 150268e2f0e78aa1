package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/podobjects"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// A SyncPod that acted stores the status it fetched afterwards in the
// PLEG's cache too, stamped before the fetch: the relist that sees the
// same need not fetch it again, and the pod's next sync waits for nothing.
func TestSyncPodStoresItsFreshStatusInTheCache(t *testing.T) {
	root := t.TempDir()
	vols, err := volumes.New(volumes.Options{RootDir: root})
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(root)
	cache := pleg.NewCache()
	cache.UpdateTime(time.Now()) // a relist has happened: a new pod waits for nothing
	clk := testingclock.NewFakeClock(time.Now())
	s := &syncer{
		rt: rt, vols: vols, cache: cache, statuses: status.NewStore(), timeline: timeline.New(0),
		desired: func(types.UID) bool { return true }, finished: func(*corev1.Pod) {}, clock: clk,
		log: testr.New(t), pods: map[types.UID]*podRecord{}, deadlines: newDeadlines(),
	}
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)

	if _, err := s.SyncPod(context.Background(), podworkers.Create, pod); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	cached, err := cache.Get(pod.UID)
	if err != nil || !running(cached) {
		t.Fatalf("cached status after SyncPod: %+v, %v; want its container running", cached, err)
	}
	// Stamped when it was fetched, which is when the sync ended: the next
	// sync takes it without waiting for a relist.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	clk.Step(time.Millisecond)
	if got, err := cache.GetNewerThan(ctx, pod.UID, clk.Now().Add(-2*time.Millisecond)); err != nil || got != cached {
		t.Errorf("GetNewerThan: %+v, %v; want the stored status", got, err)
	}

}

// Syncs that do nothing (the pod runs as it should; its volumes' content
// was refreshed) wait for no relist, one after another: no relist happens
// here, so a wait would end with the context.
func TestSyncPodThatDidNothingWaitsForNoRelist(t *testing.T) {
	root := t.TempDir()
	vols, err := volumes.New(volumes.Options{RootDir: root})
	if err != nil {
		t.Fatal(err)
	}
	cache := pleg.NewCache()
	cache.UpdateTime(time.Now())
	s := &syncer{
		rt: newFakeRuntime(root), vols: vols, cache: cache, statuses: status.NewStore(), timeline: timeline.New(0),
		desired: func(types.UID) bool { return true }, finished: func(*corev1.Pod) {}, clock: clock.RealClock{},
		log: testr.New(t), pods: map[types.UID]*podRecord{}, deadlines: newDeadlines(),
	}
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	for i := range 4 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := s.SyncPod(ctx, podworkers.Sync, pod)
		cancel()
		if err != nil {
			t.Fatalf("sync %d (the first starts the pod, the others change nothing): %v", i+1, err)
		}
	}
}

func running(s *runtime.PodStatus) bool {
	for _, c := range s.Containers {
		if c.State == runtime.ContainerStateRunning {
			return true
		}
	}
	return false
}

// Failures that clear within moments are marked for the workers' short
// back-off; every other failure keeps the full one.
func TestClassify(t *testing.T) {
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	host := pod.DeepCopy()
	host.Spec.HostNetwork = true
	reserved := fmt.Errorf("%w: %w: name is reserved for x", runtime.ErrCreateSandbox, runtime.ErrNameReserved)
	noCNI := fmt.Errorf("%w: cni plugin not initialized", runtime.ErrCreateSandbox)
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		err       error
		transient bool
		network   bool
	}{
		{"reserved name", pod, reserved, true, false},
		{"reserved name, host network", host, reserved, true, false},
		{"no CNI yet", pod, noCNI, false, true},
		{"no CNI, host network", host, noCNI, false, false},
		{"other refusal", pod, fmt.Errorf("%w: no space left", runtime.ErrCreateSandbox), false, false},
		{"image pull", pod, runtime.ErrImagePull, false, false},
	} {
		err := classify(tc.pod, tc.err)
		if errors.Is(err, podworkers.ErrTransient) != tc.transient || errors.Is(err, podworkers.ErrNetworkNotReady) != tc.network {
			t.Errorf("%s: classify = %v, want transient=%v network=%v", tc.name, err, tc.transient, tc.network)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: classify lost the cause %v", tc.name, tc.err)
		}
	}
}

// failingVolumes fails every Setup with err.
type failingVolumes struct{ err error }

func (v failingVolumes) Setup(context.Context, *corev1.Pod) (runtime.ContainerMounts, error) {
	return nil, v.err
}
func (failingVolumes) Cleanup(types.UID) error { return nil }

// A pod whose objects the Node authorizer does not let the node read yet
// waits without a FailedMount event or status, and is retried soon; any
// other volume failure is reported, and takes the full back-off.
func TestSyncPodWaitsQuietlyForTheNodeAuthorizer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		reported  bool
		transient bool
	}{
		{"not yet authorized", fmt.Errorf("volume v: %w", podobjects.ErrNotYetAuthorized), false, true},
		{"other failure", errors.New("volume v: no such configmap"), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := pleg.NewCache()
			cache.UpdateTime(time.Now())
			rec := record.NewFakeRecorder(10)
			s := &syncer{
				rt: newFakeRuntime(t.TempDir()), vols: failingVolumes{tc.err}, cache: cache, statuses: status.NewStore(),
				timeline: timeline.New(0), events: newPodEvents(rec, "node"),
				desired: func(types.UID) bool { return true }, finished: func(*corev1.Pod) {}, clock: clock.RealClock{},
				log: testr.New(t), pods: map[types.UID]*podRecord{}, deadlines: newDeadlines(),
			}
			pod := apiPod("web", "100m")
			_, err := s.SyncPod(context.Background(), podworkers.Create, pod)
			if err == nil {
				t.Fatal("SyncPod succeeded with failing volumes")
			}
			if got := errors.Is(err, podworkers.ErrTransient); got != tc.transient {
				t.Errorf("retried soon = %v, want %v (%v)", got, tc.transient, err)
			}
			st := s.statuses.Status(pod.UID)
			if st == nil {
				t.Fatal("no status stored: the pod must show it waits")
			}
			failedMount := strings.Contains(fmt.Sprint(st.Conditions), status.ReasonFailedMount)
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if failedMount != tc.reported || (len(events) > 0) != tc.reported {
				t.Errorf("FailedMount in the status %v, events %q; want reported = %v", failedMount, events, tc.reported)
			}
		})
	}
}
