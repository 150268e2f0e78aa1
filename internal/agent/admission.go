package agent

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ReasonHostPortConflict is the status reason of a pod held back because
// another pod holds one of its host ports.
const ReasonHostPortConflict = "HostPortConflict"

// portAdmission admits a pod only when none of its host ports collides
// with one an admitted pod holds (podtypes.HostPort.Conflicts). The first
// pod keeps its ports; a later one is held back, its status saying which
// pod and port stand in its way, and is admitted once that pod has
// stopped (see readmit). Collisions inside one pod are staging/config's to
// refuse.
//
// An admitted pod holds its ports until it is no longer desired and no
// container of it may run. A pod with the same full name does not collide:
// it is the next version of a static pod, which the workers start only
// once the previous one has stopped.
//
// The sync loop's goroutine owns it; mu guards refused for the readers of
// the local API.
type portAdmission struct {
	holders map[types.UID]*corev1.Pod

	mu      sync.Mutex
	refused map[types.UID]*heldPod
	seq     int
}

type heldPod struct {
	pod *corev1.Pod
	why string
	// seq orders the held pods by when they were first held back: the one
	// waiting longest is readmitted first.
	seq int
}

func newPortAdmission() *portAdmission {
	return &portAdmission{holders: map[types.UID]*corev1.Pod{}, refused: map[types.UID]*heldPod{}}
}

// admit decides whether pod may run now. It returns "" and records the pod
// as a holder of its ports, or why not; a pod held back is remembered
// until it is admitted or dropped. first is true when the pod was not
// held back before, or for another reason.
func (a *portAdmission) admit(pod *corev1.Pod) (why string, first bool) {
	if _, ok := a.holders[pod.UID]; ok {
		a.holders[pod.UID] = pod
		return "", false
	}
	want := podtypes.HostPorts(pod)
	if len(want) == 0 {
		a.drop(pod.UID)
		return "", false
	}
	why = a.conflict(pod, want)
	a.mu.Lock()
	defer a.mu.Unlock()
	if why == "" {
		delete(a.refused, pod.UID)
		a.holders[pod.UID] = pod
		return "", false
	}
	h, ok := a.refused[pod.UID]
	if !ok {
		a.seq++
		h = &heldPod{seq: a.seq}
		a.refused[pod.UID] = h
	}
	first = h.why != why
	h.pod, h.why = pod, why
	return why, first
}

// conflict names the first holder, by namespace and name, that stands in
// the way of one of want, or returns "".
func (a *portAdmission) conflict(pod *corev1.Pod, want []podtypes.HostPort) string {
	holders := make([]*corev1.Pod, 0, len(a.holders))
	for _, h := range a.holders {
		holders = append(holders, h)
	}
	slices.SortFunc(holders, func(x, y *corev1.Pod) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name), cmp.Compare(x.UID, y.UID))
	})
	full := podtypes.PodFullName(pod)
	for _, h := range holders {
		if podtypes.PodFullName(h) == full {
			continue
		}
		for _, held := range podtypes.HostPorts(h) {
			for _, w := range want {
				if w.Conflicts(held) {
					return fmt.Sprintf("host port %s of container %q is held by container %q (%s) of pod %s/%s (uid %s); the pod starts once that pod has stopped",
						w, w.Container, held.Container, held, h.Namespace, h.Name, h.UID)
				}
			}
		}
	}
	return ""
}

// drop forgets a held-back pod no source wants any more; it reports
// whether the pod was held back. An admitted pod keeps its ports until
// release finds it stopped.
func (a *portAdmission) drop(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.refused[uid]
	delete(a.refused, uid)
	return ok
}

// release frees the ports of holders that no longer run: mayRun says
// whether a pod is desired or may still have running containers.
func (a *portAdmission) release(mayRun func(types.UID) bool) {
	for uid := range a.holders {
		if !mayRun(uid) {
			delete(a.holders, uid)
		}
	}
}

// held returns the pods held back, the longest waiting first.
func (a *portAdmission) held() []*corev1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	hs := make([]*heldPod, 0, len(a.refused))
	for _, h := range a.refused {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(x, y *heldPod) int { return cmp.Compare(x.seq, y.seq) })
	out := make([]*corev1.Pod, len(hs))
	for i, h := range hs {
		out[i] = h.pod
	}
	return out
}

// isRefused reports whether the pod is held back. Safe from any goroutine.
func (a *portAdmission) isRefused(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.refused[uid]
	return ok
}

// heldOf returns the held-back pods of a source.
func (a *portAdmission) heldOf(src podtypes.Source) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range a.held() {
		if s, err := podtypes.PodSource(pod); err == nil && s == src {
			out = append(out, pod)
		}
	}
	return out
}
