package podworkers

import "k8s.io/apimachinery/pkg/types"

// SyncKnownPods is the workers' housekeeping; the agent calls it
// periodically with the UIDs of every pod it wants to run. It returns the
// state of every pod still known.
//
// A pod not in desired is an orphan: its worker now terminates it (a running
// SyncPod is cancelled), and retries a termination that failed. An orphan
// whose worker has finished, or that never started, is forgotten. A desired
// pod whose worker finished after a Create was refused (see UpdatePod) is
// forgotten too and left out of the result: the agent should then give it
// to UpdatePod again, as a new worker.
//
// After the first call the workers assume they have been given every pod,
// so that the queries below answer for pods they do not know.
func (p *PodWorkers) SyncKnownPods(desired []types.UID) map[types.UID]KnownPod {
	want := make(map[types.UID]struct{}, len(desired))
	for _, uid := range desired {
		want[uid] = struct{}{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced = true
	known := make(map[types.UID]KnownPod, len(p.workers))
	for uid, w := range p.workers {
		_, desired := want[uid]
		p.stepLocked(w, event{kind: evHousekeep, desired: desired})
		if p.workers[uid] == w {
			known[uid] = w.state.known(!desired)
		}
	}
	return known
}

// DuePods removes and returns the pods the work queue says are due: each
// should be given to UpdatePod with type Sync, with its newest spec. A pod
// is queued at once when its phase changes, after a jittered resync
// interval when SyncPod succeeded, and after a jittered backoff when a call
// failed. The agent polls it, as the kubelet does every second. A due pod
// the agent no longer has is left to SyncKnownPods, which drives orphans.
func (p *PodWorkers) DuePods() []types.UID {
	p.mu.Lock()
	defer p.mu.Unlock()
	due := p.queue.popDue(p.clock.Now())
	if len(due) > 0 {
		p.metrics.QueueDepth(p.queue.len())
	}
	return due
}

// IsPodTerminationRequested reports whether the pod has been killed, has
// been deleted or has reached a terminal phase. It stays true until the pod
// is forgotten; an unknown pod is not terminating.
func (p *PodWorkers) IsPodTerminationRequested(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.workers[uid]
	return ok && w.state.terminationRequested
}

// CouldHaveRunningContainers reports whether containers of the pod may be
// running: false only once its termination has succeeded. A pod the
// workers do not know could be running until SyncKnownPods has been called.
func (p *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	return p.query(uid, true, func(s *podState) bool { return !s.terminated })
}

// ShouldPodContentBeRemoved reports whether the pod's volumes and
// directories may be removed: for an evicted pod, or a deleted one whose
// containers are stopped. After SyncKnownPods has been called, the content
// of a pod the workers do not know may be removed.
func (p *PodWorkers) ShouldPodContentBeRemoved(uid types.UID) bool {
	return p.query(uid, false, func(s *podState) bool { return s.evicted || s.deleted && s.terminated })
}

// IsPodFinished reports whether what the pod held has been released: its
// SyncTerminatedPod succeeded (or nothing of it ever ran). A pod the
// workers do not know is finished once SyncKnownPods has been called.
func (p *PodWorkers) IsPodFinished(uid types.UID) bool {
	return p.query(uid, false, func(s *podState) bool { return s.finished })
}

// IsPodKnownTerminated reports whether the workers know the pod and know
// that none of its containers runs.
func (p *PodWorkers) IsPodKnownTerminated(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.workers[uid]
	return ok && w.state.terminated
}

// query answers f for a known pod. For an unknown one it answers
// beforeSync until SyncKnownPods has been called, and its opposite after:
// once every pod has been given, an unknown pod is one that has ended.
func (p *PodWorkers) query(uid types.UID, beforeSync bool, f func(*podState) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[uid]; ok {
		return f(&w.state)
	}
	return beforeSync != p.synced
}
