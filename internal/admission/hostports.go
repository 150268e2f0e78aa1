package admission

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

// ReasonNodePorts is the status reason of an API pod refused because
// another pod holds one of its host ports, as the kubelet names it.
const ReasonNodePorts = "NodePorts"

// HostPorts admits a pod only when none of its host ports collides
// with one an admitted pod holds (podtypes.HostPort.Conflicts). The first
// pod keeps its ports; a later one is held back, its status saying which
// pod and port stand in its way, and is admitted once that pod has
// stopped (Release, then Admit again). Collisions inside one pod are staging/config's to
// refuse.
//
// An admitted pod holds its ports until it is no longer desired and no
// container of it may run. A pod with the same full name does not collide:
// it is the next version of a static pod, which the workers start only
// once the previous one has stopped.
//
// The agent's sync loop owns it; mu guards refused for the readers of
// the local API (IsRefused).
type HostPorts struct {
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

// NewHostPorts returns a HostPorts that no pod holds.
func NewHostPorts() *HostPorts {
	return &HostPorts{holders: map[types.UID]*corev1.Pod{}, refused: map[types.UID]*heldPod{}}
}

// Admit decides whether pod may run now. It returns "" and records the pod
// as a holder of its ports, or why not; a pod held back is remembered
// until it is admitted or dropped. first is true when the pod was not
// held back before, or for another reason.
func (a *HostPorts) Admit(pod *corev1.Pod) (why string, first bool) {
	if _, ok := a.holders[pod.UID]; ok {
		a.holders[pod.UID] = pod
		return "", false
	}
	want := podtypes.HostPorts(pod)
	if len(want) == 0 {
		a.Drop(pod.UID)
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
func (a *HostPorts) conflict(pod *corev1.Pod, want []podtypes.HostPort) string {
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

// Drop forgets a held-back pod no source wants any more; it reports
// whether the pod was held back. An admitted pod keeps its ports until
// Release finds it stopped.
func (a *HostPorts) Drop(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.refused[uid]
	delete(a.refused, uid)
	return ok
}

// Release frees the ports of holders that no longer run: mayRun says
// whether a pod is desired or may still have running containers.
func (a *HostPorts) Release(mayRun func(types.UID) bool) {
	for uid := range a.holders {
		if !mayRun(uid) {
			delete(a.holders, uid)
		}
	}
}

// Held returns the pods held back, the longest waiting first.
func (a *HostPorts) Held() []*corev1.Pod {
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

// IsRefused reports whether the pod is held back. Safe from any goroutine.
func (a *HostPorts) IsRefused(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.refused[uid]
	return ok
}

// heldOf returns the held-back pods of a source.
func (a *HostPorts) heldOf(src podtypes.Source) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range a.Held() {
		if s, err := podtypes.PodSource(pod); err == nil && s == src {
			out = append(out, pod)
		}
	}
	return out
}

// AdmitAPIPod decides whether a pod bound to this node through the
// apiserver may run, as the kubelet's admit handlers run, in order: the
// node's pressure conditions (underPressure), its sysctls, then Admit
// against the node and the active pods, then the node features it needs
// against those the node declares (ReasonFeatureUnsupported), then its
// host ports against their holders (ReasonNodePorts). It runs once, when the
// pod first comes; a pod admitted holds its host ports, a pod refused is
// not held back: it never runs.
//
// Static pods are not checked this way: they are the node's own, must run
// while the apiserver and the Node are away, and the kubelet counts them
// critical; their sysctls still are, and their host ports hold them back
// until free (Admit).
func AdmitAPIPod(pod *corev1.Pod, node *corev1.Node, active []*corev1.Pod, sysctls *Sysctls, ports *HostPorts) Result {
	res := underPressure(pod, pressureOf(node))
	if res.Reason == "" {
		res = sysctls.Admit(pod)
	}
	if res.Reason == "" {
		res = Admit(pod, node, active)
	}
	if res.Reason == "" {
		res = declaredFeatures(pod, node)
	}
	if res.Reason == "" {
		if why, _ := ports.Admit(pod); why != "" {
			ports.Drop(pod.UID)
			res = Result{Reason: ReasonNodePorts, Message: "Predicate NodePorts failed: " + why}
		}
	}
	return res
}
