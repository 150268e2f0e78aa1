package config

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// notifications turns a diff into the updates the mode calls for. The pods
// in them are copies: the receiver owns them, the merger keeps its own.
// m.mu is held.
func (m *Merger) notifications(src podtypes.Source, d *diff) []podtypes.PodUpdate {
	var out []podtypes.PodUpdate
	send := func(op podtypes.Op, source podtypes.Source, pods []*corev1.Pod) {
		if len(pods) > 0 {
			out = append(out, podtypes.PodUpdate{Op: op, Source: source, Pods: copyPods(pods)})
		}
	}
	snapshot := func() {
		out = append(out, podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.AllSource, Pods: copyPods(m.mergedState())})
	}
	added := len(d.adds) > 0 || len(d.readmitted) > 0

	switch m.mode {
	case Incremental:
		send(podtypes.REMOVE, src, d.removes)
		send(podtypes.ADD, src, d.adds)
		send(podtypes.UPDATE, src, d.updates)
		send(podtypes.DELETE, src, d.deletes)
		if d.firstSet && len(d.adds) == 0 && len(d.updates) == 0 && len(d.deletes) == 0 {
			// Nothing to say but that the source is ready: say that.
			out = append(out, podtypes.PodUpdate{Op: podtypes.ADD, Source: src, Pods: []*corev1.Pod{}})
		}
		send(podtypes.RECONCILE, src, d.reconciles)
		for _, s := range podtypes.Sources() {
			send(podtypes.ADD, s, d.readmitted[s])
		}
	case Snapshot:
		if added || len(d.updates) > 0 || len(d.deletes) > 0 || len(d.removes) > 0 || d.firstSet {
			snapshot()
		}
	case SnapshotAndUpdates:
		if added || len(d.removes) > 0 || d.firstSet {
			snapshot()
		}
		send(podtypes.UPDATE, src, d.updates)
		send(podtypes.DELETE, src, d.deletes)
	}
	return out
}
