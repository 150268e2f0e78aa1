package agent

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/apisync"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// PodInfo is what the agent knows of one pod, for the local API.
type PodInfo struct {
	Pod *corev1.Pod
	// Status is the API status as the agent computed it; empty until the
	// pod's first sync.
	Status corev1.PodStatus
	// WorkerPhase is "sync", "terminating" or "terminated", or "refused"
	// for a pod held back (see Status.Reason).
	WorkerPhase string
	Source      podtypes.Source
	ConfigHash  string
	// Origin is the manifest's file path or URL, as its source recorded
	// it; "" for a pod from the apiserver.
	Origin string
	// Restored: the pod was brought back from the checkpoint at start,
	// before its source delivered it. Adopted: its first sync found its
	// containers running (started by an agent before this one) and kept them.
	Restored bool
	Adopted  bool
	// Mirror is a static pod's mirror pod, in connected mode; nil
	// otherwise.
	Mirror *MirrorInfo
	// Processes is what the PLEG's exit watch knows of the processes of
	// the containers the status shows running, by the status's container
	// ID; a container it does not watch has no entry.
	Processes map[string]pleg.ProcessState
}

// MirrorInfo is the state of a static pod's mirror pod.
type MirrorInfo = apisync.Mirror

// Pods returns every pod a source wants, and those still being terminated
// or whose final status is kept, sorted by namespace and name (then UID).
// The pods must be treated as read-only.
func (a *Agent) Pods() []PodInfo {
	byUID := map[types.UID]*PodInfo{}
	for _, pod := range a.pods.Pods() {
		byUID[pod.UID] = &PodInfo{Pod: pod}
	}
	for _, e := range a.statuses.List() {
		info, ok := byUID[e.Pod.UID]
		if !ok {
			info = &PodInfo{Pod: e.Pod}
			byUID[e.Pod.UID] = info
		}
		info.Status = e.Status
	}
	out := make([]PodInfo, 0, len(byUID))
	for _, info := range byUID {
		out = append(out, a.complete(*info))
	}
	slices.SortFunc(out, func(x, y PodInfo) int {
		return cmp.Or(cmp.Compare(x.Pod.Namespace, y.Pod.Namespace), cmp.Compare(x.Pod.Name, y.Pod.Name), cmp.Compare(x.Pod.UID, y.Pod.UID))
	})
	return out
}

// Pod returns what the agent knows of the pod with the given UID.
func (a *Agent) Pod(uid types.UID) (PodInfo, bool) {
	info := PodInfo{}
	if pod, ok := a.pods.PodByUID(uid); ok {
		info.Pod = pod
	}
	if e, ok := a.statuses.Get(uid); ok {
		if info.Pod == nil {
			info.Pod = e.Pod
		}
		info.Status = e.Status
	}
	if info.Pod == nil {
		return PodInfo{}, false
	}
	return a.complete(info), true
}

func (a *Agent) complete(info PodInfo) PodInfo {
	uid := info.Pod.UID
	switch {
	case a.admission.IsRefused(uid):
		info.WorkerPhase = phaseRefused
	case a.workers.IsPodKnownTerminated(uid):
		info.WorkerPhase = phaseTerminated
	case a.workers.IsPodTerminationRequested(uid):
		info.WorkerPhase = phaseTerminating
	default:
		info.WorkerPhase = phaseSync
	}
	info.Source, _ = podtypes.PodSource(info.Pod)
	info.ConfigHash = podtypes.ConfigHash(info.Pod)
	info.Origin = podtypes.ConfigOrigin(info.Pod)
	info.Restored = a.ckpt.WasRestored(uid)
	info.Adopted = a.adoption.wasAdopted(uid)
	info.Processes = a.processes(info.Status)
	info.Mirror = a.api.Mirror(info.Pod)
	return info
}

// listed are the pods Pods lists.
func (a *Agent) listed() []*corev1.Pod {
	pods := a.Pods()
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.Pod
	}
	return out
}

// processes asks the exit watch about the containers st shows running.
func (a *Agent) processes(st corev1.PodStatus) map[string]pleg.ProcessState {
	var out map[string]pleg.ProcessState
	for _, statuses := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, c := range statuses {
			if c.State.Running == nil || c.ContainerID == "" {
				continue
			}
			if ps := a.pleg.Process(status.RuntimeID(c.ContainerID)); ps != pleg.ProcessUnwatched {
				if out == nil {
					out = map[string]pleg.ProcessState{}
				}
				out[c.ContainerID] = ps
			}
		}
	}
	return out
}

// Timeline returns the pod's recent events, oldest first.
func (a *Agent) Timeline(uid types.UID) []timeline.Entry {
	return a.timeline.Get(uid)
}
