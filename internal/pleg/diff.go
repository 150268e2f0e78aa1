package pleg

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// snapshot is what one relist saw: per pod, the state of every sandbox and
// container by ID.
type snapshot map[types.UID]podRecord

type podRecord struct {
	sandboxes  map[string]runtime.SandboxState
	containers map[string]runtime.ContainerState
}

func snapshotOf(pods []*runtime.Pod) snapshot {
	s := make(snapshot, len(pods))
	for _, p := range pods {
		r := podRecord{
			sandboxes:  make(map[string]runtime.SandboxState, len(p.Sandboxes)),
			containers: make(map[string]runtime.ContainerState, len(p.Containers)),
		}
		for _, sb := range p.Sandboxes {
			r.sandboxes[sb.ID] = sb.State
		}
		for _, c := range p.Containers {
			r.containers[c.ID] = c.State
		}
		s[p.ID] = r
	}
	return s
}

// diff returns the events that lead from old to new: per pod (in UID
// order) the sandbox events, then the container events, each in ID order.
func diff(old, new snapshot) []PodLifecycleEvent {
	var events []PodLifecycleEvent
	for _, uid := range sortedKeys(old, new) {
		o, n := old[uid], new[uid]
		for _, id := range sortedKeys(o.sandboxes, n.sandboxes) {
			before, had := o.sandboxes[id]
			after, has := n.sandboxes[id]
			if had != has || before != after {
				events = append(events, PodLifecycleEvent{ID: uid, Type: PodSandboxChanged, Data: id})
			}
		}
		for _, id := range sortedKeys(o.containers, n.containers) {
			events = append(events, containerEvents(uid, id, o.containers[id], n.containers[id])...)
		}
	}
	return events
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

// sortedKeys returns the union of the maps' keys, sorted.
func sortedKeys[K cmp.Ordered, V any](a, b map[K]V) []K {
	keys := make([]K, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
