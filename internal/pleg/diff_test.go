package pleg

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func ctr(id string, s runtime.ContainerState) runtime.Container {
	return runtime.Container{ID: id, Name: "app", State: s}
}

func pod(uid string, sandboxes []runtime.Sandbox, containers ...runtime.Container) *runtime.Pod {
	return &runtime.Pod{ID: typesUID(uid), Sandboxes: sandboxes, Containers: containers}
}

func sb(id string, s runtime.SandboxState) []runtime.Sandbox {
	return []runtime.Sandbox{{ID: id, State: s}}
}

func TestDiff(t *testing.T) {
	const (
		created = runtime.ContainerStateCreated
		run     = runtime.ContainerStateRunning
		exit    = runtime.ContainerStateExited
		unknown = runtime.ContainerStateUnknown
	)
	ev := func(uid string, typ EventType, id string) PodLifecycleEvent {
		return PodLifecycleEvent{ID: typesUID(uid), Type: typ, Data: id}
	}
	for _, tc := range []struct {
		name     string
		old, new []*runtime.Pod
		want     []PodLifecycleEvent
	}{{
		name: "nothing changed",
		old:  []*runtime.Pod{pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", run))},
		new:  []*runtime.Pod{pod("u1", sb("s1", runtime.SandboxReady), ctr("c1", run))},
	}, {
		name: "a new pod: its sandbox, then its containers",
		new:  []*runtime.Pod{pod("u1", sb("s1", runtime.SandboxReady), ctr("c2", created), ctr("c1", run))},
		want: []PodLifecycleEvent{ev("u1", PodSandboxChanged, "s1"), ev("u1", ContainerStarted, "c1"), ev("u1", ContainerChanged, "c2")},
	}, {
		name: "a container exits",
		old:  []*runtime.Pod{pod("u1", nil, ctr("c1", run))},
		new:  []*runtime.Pod{pod("u1", nil, ctr("c1", exit))},
		want: []PodLifecycleEvent{ev("u1", ContainerDied, "c1")},
	}, {
		name: "a created container starts",
		old:  []*runtime.Pod{pod("u1", nil, ctr("c1", created))},
		new:  []*runtime.Pod{pod("u1", nil, ctr("c1", run))},
		want: []PodLifecycleEvent{ev("u1", ContainerStarted, "c1")},
	}, {
		name: "a container becomes unknown",
		old:  []*runtime.Pod{pod("u1", nil, ctr("c1", run))},
		new:  []*runtime.Pod{pod("u1", nil, ctr("c1", unknown))},
		want: []PodLifecycleEvent{ev("u1", ContainerChanged, "c1")},
	}, {
		name: "an exited container is removed",
		old:  []*runtime.Pod{pod("u1", nil, ctr("c1", exit))},
		new:  []*runtime.Pod{pod("u1", nil)},
		want: []PodLifecycleEvent{ev("u1", ContainerRemoved, "c1")},
	}, {
		name: "a running container vanishes between relists: died and removed",
		old:  []*runtime.Pod{pod("u1", nil, ctr("c1", run))},
		new:  nil,
		want: []PodLifecycleEvent{ev("u1", ContainerDied, "c1"), ev("u1", ContainerRemoved, "c1")},
	}, {
		name: "a container that ran and exited between relists: died",
		old:  []*runtime.Pod{pod("u1", nil)},
		new:  []*runtime.Pod{pod("u1", nil, ctr("c1", exit))},
		want: []PodLifecycleEvent{ev("u1", ContainerDied, "c1")},
	}, {
		name: "sandbox stops, then goes",
		old:  []*runtime.Pod{pod("u1", sb("s1", runtime.SandboxReady)), pod("u2", sb("s2", runtime.SandboxNotReady))},
		new:  []*runtime.Pod{pod("u1", sb("s1", runtime.SandboxNotReady))},
		want: []PodLifecycleEvent{ev("u1", PodSandboxChanged, "s1"), ev("u2", PodSandboxChanged, "s2")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := diff(snapshotOf(tc.old), snapshotOf(tc.new))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSnapshotAllocations pins what a relist of an idle node costs: three
// allocations for the snapshot whatever the number of pods, and none for
// a diff that finds nothing.
func TestSnapshotAllocations(t *testing.T) {
	var pods []*runtime.Pod
	for i := range 110 {
		id := fmt.Sprint(i)
		pods = append(pods, pod("u"+id, sb("s"+id, runtime.SandboxReady), ctr("c"+id, runtime.ContainerStateRunning)))
	}
	prev := snapshotOf(pods)
	if n := testing.AllocsPerRun(10, func() { snapshotOf(pods) }); n > 3 {
		t.Errorf("snapshotOf of %d pods: %v allocations, want at most 3", len(pods), n)
	}
	if n := testing.AllocsPerRun(10, func() { diff(prev, prev) }); n > 0 {
		t.Errorf("diff of an unchanged snapshot: %v allocations, want none", n)
	}
}
