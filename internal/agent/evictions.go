package agent

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// evictions holds the pods the node evicts, with why in the kubelet's
// words, until their workers forget them: every status the syncer stores
// for such a pod says Failed, Evicted, and the worker stops what runs. A
// nil one holds none.
type evictions struct {
	mu  sync.Mutex
	why map[types.UID]string
}

func newEvictions() *evictions { return &evictions{why: map[types.UID]string{}} }

// evict records why the pod is evicted, and reports whether that is news
// (the first reason stays).
func (e *evictions) evict(uid types.UID, why string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.why[uid]; ok {
		return false
	}
	e.why[uid] = why
	return true
}

// reason is why the pod is evicted, or "".
func (e *evictions) reason(uid types.UID) string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.why[uid]
}

func (e *evictions) forget(uid types.UID) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.why, uid)
}

// Evict stops the pod within grace seconds, for the node: it ends Failed
// with reason Evicted, the message, and the DisruptionTarget condition,
// as under the kubelet's eviction manager. It reports false if the pod is
// already being evicted.
func (a *Agent) Evict(pod *corev1.Pod, message string, grace int64) bool {
	if !a.evictions.evict(pod.UID, message) {
		return false
	}
	a.timeline.Record(pod.UID, timeline.KindWorker, "evicted (grace period %ds): %s", grace, message)
	a.events.evicted(pod, message)
	err := a.workers.UpdatePod(podworkers.UpdatePodOptions{
		Type: podworkers.Kill, Pod: pod,
		// The status says Evicted from the evictions held (SyncTerminatingPod).
		Kill: &podworkers.KillPodOptions{GracePeriodOverride: &grace},
	})
	if err != nil {
		a.log.V(2).Info("Eviction not taken", "pod", podtypes.PodFullName(pod), "err", err)
		a.evictions.forget(pod.UID)
		return false
	}
	return true
}

// Evictable are the pods that may still run, for the eviction manager to
// choose from: desired, not being deleted, not finished.
func (a *Agent) Evictable() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range a.pods.Pods() {
		if pod.DeletionTimestamp != nil || a.evictions.reason(pod.UID) != "" {
			continue
		}
		if st := a.statuses.Status(pod.UID); st != nil && podtypes.IsTerminal(st.Phase) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// Reclaimed tells whether what the pod held is released: its containers
// stopped and removed, its volumes (a memory emptyDir's pages among them)
// and cgroup gone.
func (a *Agent) Reclaimed(uid types.UID) bool { return a.workers.IsPodFinished(uid) }
