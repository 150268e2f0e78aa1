package app

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// eventReasonAPIPodsUnsupported is the reason of the event on a pod bound
// to this node that the agent does not run.
const eventReasonAPIPodsUnsupported = "APIPodsNotSupported"

// mirrorsOnly passes the apiserver source's mirror pods to the merger and
// holds back the other pods bound to the node: the agent does not run
// pods from the apiserver yet (the node's taint keeps the scheduler
// away). Each held-back pod gets one event that says so, and a log line.
type mirrorsOnly struct {
	next config.Sink
	rec  record.EventRecorder
	log  func(msg string, kv ...any)

	mu   sync.Mutex
	told map[types.UID]bool
}

func (m *mirrorsOnly) Merge(ctx context.Context, u podtypes.PodUpdate) error {
	kept := u.Pods[:0]
	seen := map[types.UID]bool{}
	for _, pod := range u.Pods {
		if podtypes.IsMirrorPod(pod) {
			kept = append(kept, pod)
			continue
		}
		seen[pod.UID] = true
		m.tell(pod)
	}
	m.mu.Lock()
	for uid := range m.told {
		if !seen[uid] && u.Op == podtypes.SET {
			delete(m.told, uid)
		}
	}
	m.mu.Unlock()
	u.Pods = kept
	return m.next.Merge(ctx, u)
}

func (m *mirrorsOnly) tell(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.told[pod.UID] {
		return
	}
	m.told[pod.UID] = true
	m.log("Not running a pod bound to this node: pods from the apiserver are not supported yet", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
	m.rec.Eventf(pod, v1.EventTypeWarning, eventReasonAPIPodsUnsupported,
		"nodeagent does not run pods from the apiserver yet; only static pods run on this node (remove the pod, or run it on another node)")
}
