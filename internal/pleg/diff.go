package pleg

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// snapshot is what one relist saw: every pod in UID order, each with the
// state of its sandboxes and of its containers in ID order. A relist makes
// one every second, so it is sorted slices over two shared arrays rather
// than maps per pod.
type snapshot []podRecord

type podRecord struct {
	uid        types.UID
	sandboxes  []idState[runtime.SandboxState]
	containers []idState[runtime.ContainerState]
}

// idState is the state of one sandbox or container.
type idState[S ~string] struct {
	id    string
	state S
}

func byID[S ~string](a, b idState[S]) int { return cmp.Compare(a.id, b.id) }

func snapshotOf(pods []*runtime.Pod) snapshot {
	var nsb, nct int
	for _, p := range pods {
		nsb, nct = nsb+len(p.Sandboxes), nct+len(p.Containers)
	}
	sandboxes := make([]idState[runtime.SandboxState], 0, nsb)
	containers := make([]idState[runtime.ContainerState], 0, nct)
	s := make(snapshot, 0, len(pods))
	for _, p := range pods {
		sb0, ct0 := len(sandboxes), len(containers)
		for _, sb := range p.Sandboxes {
			sandboxes = append(sandboxes, idState[runtime.SandboxState]{sb.ID, sb.State})
		}
		for _, c := range p.Containers {
			containers = append(containers, idState[runtime.ContainerState]{c.ID, c.State})
		}
		// Capped, so that the next pod's appends cannot reach into them.
		r := podRecord{
			uid:        p.ID,
			sandboxes:  sandboxes[sb0:len(sandboxes):len(sandboxes)],
			containers: containers[ct0:len(containers):len(containers)],
		}
		slices.SortFunc(r.sandboxes, byID)
		slices.SortFunc(r.containers, byID)
		s = append(s, r)
	}
	slices.SortFunc(s, func(a, b podRecord) int { return cmp.Compare(a.uid, b.uid) })
	return s
}

// get returns the record of a pod; a pod the relist did not see has none
// of either.
func (s snapshot) get(uid types.UID) podRecord {
	if i, ok := slices.BinarySearchFunc(s, uid, func(r podRecord, uid types.UID) int { return cmp.Compare(r.uid, uid) }); ok {
		return s[i]
	}
	return podRecord{uid: uid}
}

// stateOf returns the state of id in states (sorted by ID), and whether it
// is there.
func stateOf[S ~string](states []idState[S], id string) (S, bool) {
	if i, ok := slices.BinarySearchFunc(states, id, func(e idState[S], id string) int { return cmp.Compare(e.id, id) }); ok {
		return states[i].state, true
	}
	return "", false
}

// diff returns the events that lead from old to new: per pod (in UID
// order) the sandbox events, then the container events, each in ID order.
func diff(old, new snapshot) []PodLifecycleEvent {
	var events []PodLifecycleEvent
	mergeSorted(old, new, func(r podRecord) types.UID { return r.uid }, func(uid types.UID, o, n podRecord, _, _ bool) {
		mergeSorted(o.sandboxes, n.sandboxes, idOf, func(id string, before, after idState[runtime.SandboxState], had, has bool) {
			if had != has || before.state != after.state {
				events = append(events, PodLifecycleEvent{ID: uid, Type: PodSandboxChanged, Data: id})
			}
		})
		mergeSorted(o.containers, n.containers, idOf, func(id string, before, after idState[runtime.ContainerState], _, _ bool) {
			events = append(events, containerEvents(uid, id, before.state, after.state)...)
		})
	})
	return events
}

func idOf[S ~string](e idState[S]) string { return e.id }

// mergeSorted walks a and b, both sorted by key, and calls f once per key
// of either, in key order, with the element each has (the zero value if it
// has none) and whether it has one.
func mergeSorted[E any, K cmp.Ordered](a, b []E, key func(E) K, f func(k K, x, y E, inA, inB bool)) {
	var zero E
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && key(a[i]) < key(b[j])):
			f(key(a[i]), a[i], zero, true, false)
			i++
		case i == len(a) || key(b[j]) < key(a[i]):
			f(key(b[j]), zero, b[j], false, true)
			j++
		default:
			f(key(a[i]), a[i], b[j], true, true)
			i, j = i+1, j+1
		}
	}
}

// containerEvents says what a container's move from one state to another
// means; "" is a container that does not exist.
func containerEvents(uid types.UID, id string, before, after runtime.ContainerState) []PodLifecycleEvent {
	if before == after {
		return nil
	}
	event := func(t EventType) PodLifecycleEvent { return PodLifecycleEvent{ID: uid, Type: t, Data: id} }
	switch after {
	case runtime.ContainerStateRunning:
		return []PodLifecycleEvent{event(ContainerStarted)}
	case runtime.ContainerStateExited:
		return []PodLifecycleEvent{event(ContainerDied)}
	case "":
		// A container that may have run and vanished without being seen
		// exited died as well.
		if before == runtime.ContainerStateRunning || before == runtime.ContainerStateUnknown {
			return []PodLifecycleEvent{event(ContainerDied), event(ContainerRemoved)}
		}
		return []PodLifecycleEvent{event(ContainerRemoved)}
	}
	return []PodLifecycleEvent{event(ContainerChanged)}
}
