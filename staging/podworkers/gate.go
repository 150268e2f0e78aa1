package podworkers

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// startGate lets static pods that share a full name start one at a time,
// in the order they arrived. Static pods are named by their manifest, so
// an edited manifest yields a new UID with the old name; the new pod must
// not start until no container of the old one runs (SyncTerminatingPod has
// succeeded), or both would claim the same ports, files and name. What
// the old pod leaves to clean up (SyncTerminatedPod) belongs to its UID
// alone, so the new one does not wait for it.
//
// The kubelet keeps the same two structures but lets a waiting pod find its
// turn by polling on a 10 s backoff. Here the pod that leaves hands the name
// to the next one at once (leave returns it to be woken), and a waiting pod
// that is killed leaves the queue at once, so it never delays the pods
// behind it. Not safe for concurrent use; the shell holds its lock.
type startGate struct {
	started map[string]types.UID   // the pod holding each name
	waiting map[string][]types.UID // pods waiting for each name, oldest first
}

func newStartGate() startGate {
	return startGate{started: map[string]types.UID{}, waiting: map[string][]types.UID{}}
}

// arrive queues a new static pod for its name.
func (g *startGate) arrive(name string, uid types.UID) {
	g.waiting[name] = append(g.waiting[name], uid)
}

// tryStart reports whether uid may start now: it holds the name already,
// or the name is free and uid is first in line, in which case it takes it.
func (g *startGate) tryStart(name string, uid types.UID) bool {
	if holder, ok := g.started[name]; ok {
		return holder == uid
	}
	q := g.waiting[name]
	if len(q) == 0 || q[0] != uid {
		return false
	}
	g.setWaiting(name, q[1:])
	g.started[name] = uid
	return true
}

// hold gives the name to uid out of turn, if no pod holds it: uid may be
// running already (a pod from before a restart). If another pod holds the
// name, uid keeps its place in the queue, so that the pods behind it wait
// for its end too.
func (g *startGate) hold(name string, uid types.UID) {
	if _, held := g.started[name]; held {
		return
	}
	if q := g.waiting[name]; len(q) > 0 {
		if i := slices.Index(q, uid); i >= 0 {
			g.setWaiting(name, slices.Delete(q, i, i+1))
		}
	}
	g.started[name] = uid
}

// leave removes uid, holding the name or waiting for it. If that frees the
// name for a waiting pod, leave returns that pod so it can be woken.
func (g *startGate) leave(name string, uid types.UID) (next types.UID, ok bool) {
	if holder, held := g.started[name]; held && holder == uid {
		delete(g.started, name)
	} else if q := g.waiting[name]; len(q) > 0 {
		if i := slices.Index(q, uid); i >= 0 {
			g.setWaiting(name, slices.Delete(q, i, i+1))
		}
	}
	if _, held := g.started[name]; held || len(g.waiting[name]) == 0 {
		return "", false
	}
	return g.waiting[name][0], true
}

func (g *startGate) setWaiting(name string, q []types.UID) {
	if len(q) == 0 {
		delete(g.waiting, name)
		return
	}
	g.waiting[name] = q
}

// holder returns the pod holding name.
func (g *startGate) holder(name string) (types.UID, bool) {
	uid, ok := g.started[name]
	return uid, ok
}

// queue returns the pods waiting for name, oldest first.
func (g *startGate) queue(name string) []types.UID {
	return slices.Clone(g.waiting[name])
}
