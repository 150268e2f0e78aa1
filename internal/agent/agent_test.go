package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestCreateRunsThePod(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)

	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	info, _ := e.agent.Pod(pod.UID)
	if info.WorkerPhase != "sync" || info.Source != podtypes.FileSource || info.ConfigHash != string(pod.UID) {
		t.Errorf("PodInfo = phase %q source %q hash %q", info.WorkerPhase, info.Source, info.ConfigHash)
	}
	cs := info.Status.ContainerStatuses
	if len(cs) != 1 || !cs[0].Ready || !strings.HasPrefix(cs[0].ContainerID, "containerd://c") {
		t.Errorf("container statuses = %+v", cs)
	}
	if info.Status.PodIP != "10.0.0.9" {
		t.Errorf("pod IP = %q", info.Status.PodIP)
	}
	if _, err := os.Stat(filepath.Join(e.rootDir, "pods", string(pod.UID))); err != nil {
		t.Errorf("pod directory: %v", err)
	}
	k := kinds(e, pod.UID)
	if k["seen"] != 1 || k["worker"] < 1 || k["runtime"] != 2 {
		t.Errorf("timeline kinds = %v, want 1 seen, a worker phase, CreateSandbox and StartContainer", k)
	}
	if got := e.agent.Pods(); len(got) != 1 || got[0].Pod.UID != pod.UID {
		t.Errorf("Pods() = %v", got)
	}
}

func TestUpdateReplacesChangedContainers(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	first := e.rt.runningIDs(pod.UID)

	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Image = "busybox:2"
	e.send(podtypes.UPDATE, changed)
	e.eventually("the new container runs", func() bool {
		info, _ := e.agent.Pod(pod.UID)
		ids := e.rt.runningIDs(pod.UID)
		return len(ids) == 1 && ids[0] != first[0] && len(info.Status.ContainerStatuses) == 1 &&
			info.Status.ContainerStatuses[0].Image == "busybox:2" && info.Status.ContainerStatuses[0].Ready
	})
	info, _ := e.agent.Pod(pod.UID)
	if last := info.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ContainerID != "containerd://"+first[0] {
		t.Errorf("last termination = %+v, want the replaced container", last)
	}
	if len(e.rt.killCalls()) != 0 {
		t.Errorf("KillPod called on an update: %v", e.rt.killCalls())
	}
}

func TestRemoveTerminatesAndCleansUp(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	logs := e.rt.PodLogDir(pod)
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}

	e.send(podtypes.REMOVE, pod)
	e.eventually("the pod is gone", func() bool {
		_, known := e.agent.Pod(pod.UID)
		return !known && !e.rt.has(pod.UID)
	})
	// Stopped with the grace period, then removed at once.
	want := []killCall{{UID: pod.UID, Grace: new(int64(7)), Spec: true, Stop: true}, {UID: pod.UID, Grace: new(int64(0)), Spec: true}}
	if diff := cmp.Diff(want, e.rt.killCalls()); diff != "" {
		t.Errorf("StopPod and KillPod calls (-want +got):\n%s", diff)
	}
	for _, dir := range []string{filepath.Join(e.rootDir, "pods", string(pod.UID)), logs} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", dir, err)
		}
	}
	k := kinds(e, pod.UID)
	if k["worker"] < 3 {
		t.Errorf("timeline %v: want the phases sync, terminating, terminated", e.agent.Timeline(pod.UID))
	}
}

func TestDeleteKillsWithTheDeletionGracePeriod(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })

	deleted := pod.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, new(int64(3))
	e.send(podtypes.DELETE, deleted)
	e.eventually("the pod is killed", func() bool { return len(e.rt.stopCalls()) == 1 && !e.rt.has(pod.UID) })
	if g := e.rt.stopCalls()[0].Grace; g == nil || *g != 3 {
		t.Errorf("grace period = %v, want 3", g)
	}
	e.eventually("the worker has terminated", func() bool { return e.workerPhase(pod.UID) == "terminated" })
}

func TestCompletedPodStaysWithItsFinalStatus(t *testing.T) {
	e := newTestEnv(t)
	e.rt.exitCodes["main"] = 0
	e.start()
	pod := staticPod("job", "busybox", corev1.RestartPolicyNever)
	e.send(podtypes.ADD, pod)

	e.eventually("the pod has terminated", func() bool { return e.workerPhase(pod.UID) == "terminated" && !e.rt.has(pod.UID) })
	info, _ := e.agent.Pod(pod.UID)
	if info.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("phase = %s, want Succeeded", info.Status.Phase)
	}
	if term := info.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 {
		t.Errorf("container state = %+v, want terminated with 0", info.Status.ContainerStatuses[0].State)
	}
	// A completed pod is not started again by resyncs or housekeeping.
	time.Sleep(100 * time.Millisecond)
	if n := len(e.rt.syncCalls(pod.UID)); n != 1 {
		t.Errorf("SyncPod called %d times, want 1", n)
	}
}

func TestOrphansAreKilledOnlyOnceSourcesAreReady(t *testing.T) {
	e := newTestEnv(t)
	orphan := staticPod("gone", "busybox", corev1.RestartPolicyAlways)
	e.rt.seed(orphan)
	if err := os.MkdirAll(filepath.Join(e.rootDir, "pods", "stale-uid"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.start()

	time.Sleep(200 * time.Millisecond) // ten housekeeping periods
	if calls := e.rt.killCalls(); len(calls) != 0 {
		t.Fatalf("KillPod before the sources were ready: %v", calls)
	}
	e.ready.Store(true)
	e.eventually("the orphan is killed", func() bool { return !e.rt.has(orphan.UID) })
	if diff := cmp.Diff([]killCall{{UID: orphan.UID}}, e.rt.killCalls()); diff != "" {
		t.Errorf("KillPod calls (-want +got):\n%s", diff)
	}
	e.eventually("the stale pod directory is removed", func() bool {
		_, err := os.Stat(filepath.Join(e.rootDir, "pods", "stale-uid"))
		return os.IsNotExist(err)
	})
}

// The allocation of a pod that went while the agent was down, of which
// nothing runs, is forgotten once the sources are ready; a desired pod's
// stays.
func TestHousekeepingForgetsTheAllocationsOfPodsThatAreGone(t *testing.T) {
	e := newTestEnv(t)
	alloc, err := allocation.Open(filepath.Join(e.rootDir, "allocated-resources.json"))
	if err != nil {
		t.Fatal(err)
	}
	gone, web := staticPod("gone", "busybox", corev1.RestartPolicyAlways), staticPod("web", "busybox", corev1.RestartPolicyAlways)
	for _, p := range []*corev1.Pod{gone, web} {
		if err := alloc.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	e.allocation = alloc
	e.ready.Store(true)
	e.send(podtypes.ADD, web) // buffered: taken in before the first housekeeping
	e.start()
	e.eventually("the gone pod's allocation is forgotten", func() bool { return !alloc.Known(gone.UID) })
	if !alloc.Known(web.UID) {
		t.Error("the desired pod's allocation is forgotten")
	}
}

func TestAdoptsWhatRunsForADesiredPod(t *testing.T) {
	e := newTestEnv(t)
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	ids := e.rt.seed(pod)
	e.ready.Store(true) // the file source has spoken: the pod is on its way
	e.start()
	e.send(podtypes.ADD, pod)

	e.eventually("the adopted pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	time.Sleep(100 * time.Millisecond) // several housekeeping periods
	if calls := e.rt.killCalls(); len(calls) != 0 {
		t.Errorf("KillPod called on an adopted pod: %v", calls)
	}
	if got := e.rt.runningIDs(pod.UID); !slices.Equal(got, ids) {
		t.Errorf("running containers = %v, want the adopted %v", got, ids)
	}
	syncs := e.rt.syncCalls(pod.UID)
	if len(syncs) == 0 || syncs[0].Observed != 1 || len(syncs[0].Actions) != 0 {
		t.Errorf("first SyncPod = %+v, want one observed container and no action", syncs)
	}
	info, _ := e.agent.Pod(pod.UID)
	if got := info.Status.ContainerStatuses[0].ContainerID; got != "containerd://"+ids[0] {
		t.Errorf("container ID = %s, want the adopted %s", got, ids[0])
	}
}

func TestRunReturnsWithoutKilling(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })

	if err := e.stop(); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if calls := e.rt.killCalls(); len(calls) != 0 {
		t.Errorf("KillPod called on the way out: %v", calls)
	}
	if len(e.rt.runningIDs(pod.UID)) != 1 {
		t.Error("the pod's container no longer runs")
	}
	if err := e.agent.Run(context.Background()); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
}

func TestStaticPodsOfOneNameNeverRunTogether(t *testing.T) {
	e := newTestEnv(t)
	e.rt.killGate = make(chan struct{})
	e.start()
	old := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, old)
	e.eventually("the first pod runs", func() bool { return e.phase(old.UID) == corev1.PodRunning })

	// An edited manifest: the same full name, a new UID.
	edited := staticPod("web", "busybox:2", corev1.RestartPolicyAlways)
	e.send(podtypes.REMOVE, old)
	e.send(podtypes.ADD, edited)
	e.eventually("the old pod is being killed", func() bool { return len(e.rt.killCalls()) == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := len(e.rt.syncCalls(edited.UID)); n != 0 {
		t.Fatalf("the new pod was synced %d times while the old one was being killed", n)
	}
	close(e.rt.killGate)
	e.eventually("the new pod runs", func() bool { return e.phase(edited.UID) == corev1.PodRunning })
	if e.rt.has(old.UID) {
		t.Error("the old pod is still in the runtime")
	}
}

func TestDesiredAgainAfterRemovalStartsAfresh(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	e.send(podtypes.REMOVE, pod)
	e.send(podtypes.ADD, pod) // the same manifest put back: the same UID
	e.eventually("the pod runs again", func() bool {
		return len(e.rt.stopCalls()) == 1 && e.rt.has(pod.UID) && e.phase(pod.UID) == corev1.PodRunning && e.workerPhase(pod.UID) == "sync"
	})
}

func TestMetricsAreRegistered(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	families, err := e.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	for _, want := range []string{
		"nodeagent_pod_workers_workers", "nodeagent_pod_workers_sync_duration_seconds",
		"nodeagent_pod_workers_queue_depth", "nodeagent_agent_pods",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("metric %s not registered; have %v", want, names)
		}
	}
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	p := buildParts(t, partsOptions{rt: newFakeRuntime(""), vols: fakeVolumes{}})
	full := func() Options {
		return Options{Syncer: p.syncer, Workers: p.workers, PLEG: p.pleg, Prober: p.prober, RootDir: "/x",
			Updates: make(chan podtypes.PodUpdate), SourcesReady: func() bool { return true }}
	}
	tests := []struct {
		name string
		mod  func(*Options)
	}{
		{"no syncer", func(o *Options) { o.Syncer = nil }},
		{"no workers", func(o *Options) { o.Workers = nil }},
		{"no PLEG", func(o *Options) { o.PLEG = nil }},
		{"no prober", func(o *Options) { o.Prober = nil }},
		{"no updates", func(o *Options) { o.Updates = nil }},
		{"no sources ready", func(o *Options) { o.SourcesReady = nil }},
		{"no root dir", func(o *Options) { o.RootDir = "" }},
		{"negative period", func(o *Options) { o.HousekeepingInterval = -time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full()
			tt.mod(&o)
			if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("New = %v, want ErrInvalidOptions", err)
			}
		})
	}
	if _, err := New(full()); err != nil {
		t.Errorf("New with every option = %v", err)
	}
}

func TestNewSyncerRefusesIncompleteOptions(t *testing.T) {
	p := buildParts(t, partsOptions{rt: newFakeRuntime(""), vols: fakeVolumes{}})
	full := func() SyncerOptions {
		return SyncerOptions{Runtime: newFakeRuntime(""), Volumes: fakeVolumes{}, Pods: p.pods, Statuses: p.statuses, PLEG: p.pleg, Prober: p.prober}
	}
	tests := []struct {
		name string
		mod  func(*SyncerOptions)
	}{
		{"no runtime", func(o *SyncerOptions) { o.Runtime = nil }},
		{"no volumes", func(o *SyncerOptions) { o.Volumes = nil }},
		{"no pods", func(o *SyncerOptions) { o.Pods = nil }},
		{"no statuses", func(o *SyncerOptions) { o.Statuses = nil }},
		{"no PLEG", func(o *SyncerOptions) { o.PLEG = nil }},
		{"no prober", func(o *SyncerOptions) { o.Prober = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full()
			tt.mod(&o)
			if _, err := NewSyncer(o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("NewSyncer = %v, want ErrInvalidOptions", err)
			}
		})
	}
	if _, err := NewSyncer(full()); err != nil {
		t.Errorf("NewSyncer with every option = %v", err)
	}
}

type fakeVolumes struct{}

func (fakeVolumes) Setup(context.Context, *corev1.Pod) (runtime.ContainerMounts, error) {
	return nil, nil
}
func (fakeVolumes) Cleanup(types.UID) error { return nil }
