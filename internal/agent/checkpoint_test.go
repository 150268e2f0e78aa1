package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// withCheckpoint runs the agent behind a real merger, restoring from store
// for the given sources before it runs, as the wiring does.
func withCheckpoint(e *testEnv, store checkpoint.Store, sources ...podtypes.Source) *config.Merger {
	m := config.NewMerger(config.MergerOptions{Mode: config.Incremental})
	e.checkpoint, e.updatesFrom = store, m.Updates()
	e.sourcesReady = func() bool { return m.SeenAllSources(sources...) }
	e.beforeRun = func(a *Agent) {
		if _, err := a.Restore(context.Background(), m, sources); err != nil {
			e.t.Fatalf("Restore: %v", err)
		}
	}
	return m
}

func httpPod(name string) *corev1.Pod {
	pod := staticPod(name, "busybox", corev1.RestartPolicyAlways)
	pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.HTTPSource)
	return pod
}

func putRecords(t *testing.T, store checkpoint.Store, phase checkpoint.Phase, deadline time.Time, pods ...*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		src, _ := podtypes.PodSource(pod)
		if phase == "" {
			phase = checkpoint.Running
		}
		rec := checkpoint.PodRecord{UID: pod.UID, Source: src, Hash: podtypes.ConfigHash(pod), Pod: pod, Phase: phase, Deadline: deadline}
		if err := store.Apply([]checkpoint.Change{{UID: pod.UID, Record: &rec}}); err != nil {
			t.Fatal(err)
		}
	}
}

func checkpointed(t *testing.T, store checkpoint.Store) map[types.UID]checkpoint.Phase {
	t.Helper()
	recs, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]checkpoint.Phase{}
	for _, r := range recs {
		out[r.UID] = r.Phase
	}
	return out
}

// The HTTP source is down: its pods come back from the checkpoint; the one
// still running is adopted, the one the runtime lost is started again, and
// neither is taken for an orphan.
func TestRestoreWhileTheSourceIsSilent(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	running, lost := httpPod("running"), httpPod("lost")
	putRecords(t, store, "", time.Time{}, running, lost)
	ids := e.rt.seed(running)
	withCheckpoint(e, store, podtypes.HTTPSource)
	e.start()

	e.eventually("both pods run", func() bool {
		return e.phase(running.UID) == corev1.PodRunning && e.phase(lost.UID) == corev1.PodRunning
	})
	time.Sleep(100 * time.Millisecond) // several housekeeping periods
	if calls := e.rt.killCalls(); len(calls) != 0 {
		t.Errorf("KillPod calls while the source is silent: %v", calls)
	}
	if got := e.rt.runningIDs(running.UID); !slices.Equal(got, ids) {
		t.Errorf("running containers = %v, want the adopted %v", got, ids)
	}
	for _, c := range []struct {
		pod     *corev1.Pod
		adopted bool
	}{{running, true}, {lost, false}} {
		info, _ := e.agent.Pod(c.pod.UID)
		if !info.Restored || info.Adopted != c.adopted {
			t.Errorf("pod %s: restored=%v adopted=%v, want restored and adopted=%v", c.pod.Name, info.Restored, info.Adopted, c.adopted)
		}
		// The timeline says so too, for an operator reading one pod.
		var restoredSaid, adoptedSaid bool
		for _, en := range e.agent.Timeline(c.pod.UID) {
			restoredSaid = restoredSaid || strings.HasPrefix(en.Message, "restored from the checkpoint")
			adoptedSaid = adoptedSaid || strings.HasPrefix(en.Message, "adopted:")
		}
		if !restoredSaid || adoptedSaid != c.adopted {
			t.Errorf("pod %s: the timeline says restored=%v adopted=%v, want restored and adopted=%v: %v",
				c.pod.Name, restoredSaid, adoptedSaid, c.adopted, e.agent.Timeline(c.pod.UID))
		}
	}
}

// The source answers at last and no longer lists a restored pod: the
// source wins, the pod is terminated and the checkpoint forgets it.
func TestSourceThatAnswersWinsOverTheCheckpoint(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	kept, dropped := httpPod("kept"), httpPod("dropped")
	putRecords(t, store, "", time.Time{}, kept, dropped)
	e.rt.seed(kept)
	e.rt.seed(dropped)
	m := withCheckpoint(e, store, podtypes.HTTPSource)
	e.start()
	e.eventually("both restored pods run", func() bool {
		return e.phase(kept.UID) == corev1.PodRunning && e.phase(dropped.UID) == corev1.PodRunning
	})

	if err := m.Merge(context.Background(), podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.HTTPSource, Pods: []*corev1.Pod{kept.DeepCopy()}}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the dropped pod is stopped", func() bool { return !e.rt.has(dropped.UID) })
	e.eventually("the checkpoint forgets it", func() bool {
		_, ok := checkpointed(t, store)[dropped.UID]
		return !ok
	})
	if got := checkpointed(t, store); got[kept.UID] != checkpoint.Running {
		t.Errorf("checkpoint = %v, want %s running", got, kept.UID)
	}
	if !e.rt.has(kept.UID) {
		t.Error("the pod the source still lists was stopped")
	}
}

// A termination under way before the restart resumes with the time left
// until its deadline, not a fresh grace period, and then is forgotten.
func TestTerminationResumesWithTheGraceLeft(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	pod := staticPod("leaving", "busybox", corev1.RestartPolicyAlways) // grace 7s
	putRecords(t, store, checkpoint.Terminating, time.Now().Add(3*time.Second), pod)
	e.rt.seed(pod)
	withCheckpoint(e, store, podtypes.FileSource)
	e.start()

	e.eventually("the pod is stopped", func() bool { return !e.rt.has(pod.UID) })
	calls := e.rt.stopCalls()
	if len(calls) != 1 || calls[0].UID != pod.UID || calls[0].Grace == nil || *calls[0].Grace < 2 || *calls[0].Grace > 3 {
		t.Fatalf("KillPod calls = %+v, want one for %s with 2-3s of grace left", calls, pod.UID)
	}
	e.eventually("the checkpoint forgets it", func() bool { return len(checkpointed(t, store)) == 0 })
}

// A termination resumed after a crash in the middle of a manifest edit
// holds the pod's full name: the new generation starts only once the old
// one's containers are stopped, never beside them.
func TestResumedTerminationHoldsTheName(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	old, edited := staticPod("web", "busybox:1", corev1.RestartPolicyAlways), staticPod("web", "busybox:2", corev1.RestartPolicyAlways)
	putRecords(t, store, checkpoint.Terminating, time.Now().Add(3*time.Second), old)
	putRecords(t, store, "", time.Time{}, edited)
	e.rt.seed(old)
	gate := make(chan struct{})
	e.rt.killGate = gate
	withCheckpoint(e, store, podtypes.FileSource)
	e.start()

	e.eventually("the old generation is being killed", func() bool { return len(e.rt.killCalls()) == 1 })
	time.Sleep(100 * time.Millisecond) // many chances for the new one to start
	if calls := e.rt.syncCalls(edited.UID); len(calls) != 0 {
		t.Fatalf("the new generation synced %d times while the old one was still stopping", len(calls))
	}
	if calls := e.rt.killCalls(); calls[0].UID != old.UID || !calls[0].Spec || !calls[0].Stop {
		t.Fatalf("calls = %+v, want the old generation stopped with its spec", calls)
	}
	close(gate)
	e.eventually("the new generation runs", func() bool { return e.phase(edited.UID) == corev1.PodRunning })
	if e.rt.has(old.UID) {
		t.Error("the old generation is still in the runtime")
	}
	e.eventually("the checkpoint forgets the old generation", func() bool {
		_, ok := checkpointed(t, store)[old.UID]
		return !ok
	})
}

// A deadline already past stops the pod at once.
func TestTerminationPastItsDeadlineStopsAtOnce(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	pod := staticPod("late", "busybox", corev1.RestartPolicyAlways)
	putRecords(t, store, checkpoint.Terminating, time.Now().Add(-time.Minute), pod)
	e.rt.seed(pod)
	withCheckpoint(e, store, podtypes.FileSource)
	e.start()
	e.eventually("the pod is stopped", func() bool { return !e.rt.has(pod.UID) })
	if calls := e.rt.stopCalls(); len(calls) != 1 || calls[0].Grace == nil || *calls[0].Grace != 0 {
		t.Fatalf("KillPod calls = %+v, want one with no grace left", calls)
	}
}

// Once the sources are ready, orphans are killed, but never a restored pod
// whose source has not answered.
func TestOrphanCleanupSparesRestoredPods(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	restored, orphan := httpPod("restored"), staticPod("orphan", "busybox", corev1.RestartPolicyAlways)
	putRecords(t, store, "", time.Time{}, restored)
	e.rt.seed(restored)
	e.rt.seed(orphan)
	withCheckpoint(e, store, podtypes.HTTPSource)
	e.sourcesReady = func() bool { return true }
	e.start()

	e.eventually("the orphan is killed", func() bool { return !e.rt.has(orphan.UID) })
	time.Sleep(100 * time.Millisecond)
	if diff := cmp.Diff([]killCall{{UID: orphan.UID}}, e.rt.killCalls()); diff != "" {
		t.Errorf("KillPod calls (-want +got):\n%s", diff)
	}
	if !e.rt.has(restored.UID) {
		t.Error("the restored pod was killed")
	}
}

// Accepted static pods are written down; one its source removes is
// forgotten once terminated; pods of sources no longer configured and
// terminations that had ended are forgotten at start.
func TestCheckpointFollowsTheSources(t *testing.T) {
	e := newTestEnv(t)
	store := checkpoint.NewMem()
	fromHTTP, done := httpPod("unconfigured"), staticPod("done", "busybox", corev1.RestartPolicyAlways)
	putRecords(t, store, "", time.Time{}, fromHTTP)
	putRecords(t, store, checkpoint.Terminated, time.Time{}, done)
	m := withCheckpoint(e, store, podtypes.FileSource)
	e.start()
	e.eventually("the restore forgets both records", func() bool { return len(checkpointed(t, store)) == 0 })

	a, b := staticPod("a", "busybox", corev1.RestartPolicyAlways), staticPod("b", "busybox", corev1.RestartPolicyAlways)
	merge := func(pods ...*corev1.Pod) {
		if err := m.Merge(context.Background(), podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.FileSource, Pods: pods}); err != nil {
			t.Fatal(err)
		}
	}
	merge(a.DeepCopy(), b.DeepCopy())
	e.eventually("both pods are checkpointed", func() bool {
		got := checkpointed(t, store)
		return got[a.UID] == checkpoint.Running && got[b.UID] == checkpoint.Running
	})
	// A pod with nothing in the runtime yet terminates without a kill, so
	// its termination would be recorded and forgotten at once.
	e.eventually("b runs", func() bool { return len(e.rt.runningIDs(b.UID)) > 0 })
	gate := make(chan struct{})
	e.rt.mu.Lock()
	e.rt.killGate = gate
	e.rt.mu.Unlock()
	start := time.Now()
	merge(a.DeepCopy())
	e.eventually("b's termination is recorded with its deadline", func() bool {
		recs, _ := store.List()
		for _, r := range recs {
			if r.UID == b.UID && r.Phase == checkpoint.Terminating {
				// The grace period (7 s) from when the termination began:
				// after the merge, and not after now, however loaded the
				// machine is.
				const grace = 7 * time.Second
				return !r.Deadline.Before(start.Add(grace)) && !r.Deadline.After(time.Now().Add(grace))
			}
		}
		return false
	})
	close(gate)
	e.eventually("b is forgotten", func() bool {
		_, ok := checkpointed(t, store)[b.UID]
		return !ok && !e.rt.has(b.UID)
	})
	if got := checkpointed(t, store); !cmp.Equal(got, map[types.UID]checkpoint.Phase{a.UID: checkpoint.Running}) {
		t.Errorf("checkpoint = %v, want only a, running", got)
	}
}

// A pod that ran to completion is recorded with its final status, and an
// agent started on the same checkpoint reports it so and never runs it
// again, though its source sends it and the runtime no longer holds it.
func TestCompletedPodNeverRunsAgainAfterARestart(t *testing.T) {
	store := checkpoint.NewMem()
	done := staticPod("done", "busybox", corev1.RestartPolicyOnFailure)

	first := newTestEnv(t)
	first.rt.exitCodes["main"] = 0
	m1 := withCheckpoint(first, store, podtypes.FileSource)
	first.start()
	if err := m1.Merge(context.Background(), podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.FileSource, Pods: []*corev1.Pod{done.DeepCopy()}}); err != nil {
		t.Fatal(err)
	}
	first.eventually("the pod succeeded and its final status is checkpointed", func() bool {
		recs, _ := store.List()
		return first.phase(done.UID) == corev1.PodSucceeded && len(recs) == 1 && recs[0].Final != nil &&
			recs[0].Final.Phase == corev1.PodSucceeded && !first.rt.has(done.UID)
	})
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	second := newTestEnv(t)
	m2 := withCheckpoint(second, store, podtypes.FileSource)
	second.start()
	if err := m2.Merge(context.Background(), podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.FileSource, Pods: []*corev1.Pod{done.DeepCopy()}}); err != nil {
		t.Fatal(err)
	}
	second.eventually("the pod's worker is done with it", func() bool { return second.workerPhase(done.UID) == phaseTerminated })
	time.Sleep(100 * time.Millisecond) // resyncs and housekeeping
	if calls := second.rt.syncCalls(done.UID); len(calls) != 0 {
		t.Fatalf("SyncPod calls after the restart: %+v, want none", calls)
	}
	info, _ := second.agent.Pod(done.UID)
	if info.Status.Phase != corev1.PodSucceeded || !info.Restored {
		t.Fatalf("after the restart: phase %s restored %v, want Succeeded and restored", info.Status.Phase, info.Restored)
	}
	recs, _ := store.List()
	if len(recs) != 1 || recs[0].Final == nil {
		t.Fatalf("checkpoint records %+v, want the pod's with its final status", recs)
	}
	if diff := cmp.Diff(recs[0].Final.ContainerStatuses, info.Status.ContainerStatuses); diff != "" {
		t.Fatalf("container statuses after the restart differ from the checkpointed final ones (-final +now):\n%s", diff)
	}
	if cs := info.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.Reason != "Completed" {
		t.Fatalf("container status after the restart: %+v, want terminated Completed", cs)
	}
	if got := checkpointed(t, store); got[done.UID] != checkpoint.Terminated {
		t.Errorf("checkpoint = %v, want the pod kept as terminated", got)
	}
}
