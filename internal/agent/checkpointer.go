package agent

import (
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// checkpointer keeps the checkpoint in step with the agent: a static pod
// is written when a source's pod is accepted, its phase when its
// termination starts and ends, and it is forgotten once terminated and no
// longer desired. It also remembers, for this process, which pods were
// restored from the checkpoint.
//
// A nil checkpointer or store makes every method a no-op. Write errors are logged, never
// returned: the checkpoint is memory for the next start, and a pod must
// not stop running because it could not be written down.
type checkpointer struct {
	store checkpoint.Store
	clock clock.PassiveClock
	log   logr.Logger

	mu sync.Mutex
	// hashes holds the config hash of every pod the store holds, so that
	// an unchanged pod is not written again.
	hashes map[types.UID]string
	// restored are the pods brought back from the checkpoint at start.
	restored map[types.UID]bool
}

func newCheckpointer(store checkpoint.Store, c clock.PassiveClock, log logr.Logger) *checkpointer {
	return &checkpointer{
		store: store, clock: c, log: log,
		hashes: map[types.UID]string{}, restored: map[types.UID]bool{},
	}
}

// accepted records a static pod as its source gave it; other pods (from
// the apiserver, mirror pods) are not checkpointed.
func (c *checkpointer) accepted(pod *corev1.Pod) {
	if c == nil || c.store == nil || podtypes.IsMirrorPod(pod) || !podtypes.IsStaticPod(pod) {
		return
	}
	src, _ := podtypes.PodSource(pod)
	hash := podtypes.ConfigHash(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.hashes[pod.UID]; ok && h == hash {
		return
	}
	rec := checkpoint.PodRecord{UID: pod.UID, Source: src, Hash: hash, Pod: pod}
	if err := c.store.PutPod(rec); err != nil {
		c.log.Error(err, "Checkpoint: recording a static pod", "pod", podtypes.PodFullName(pod), "podUID", pod.UID)
		return
	}
	c.hashes[pod.UID] = hash
}

// running records that a checkpointed pod runs again (a pod removed and
// put back, started afresh).
func (c *checkpointer) running(uid types.UID) {
	c.setPhase(uid, checkpoint.Running, time.Time{})
}

// terminating records that the pod's termination starts now with the
// given grace period.
func (c *checkpointer) terminating(uid types.UID, grace int64) {
	c.setPhase(uid, checkpoint.Terminating, c.clock.Now().Add(time.Duration(grace)*time.Second))
}

// terminated records that none of the pod's containers runs any more.
func (c *checkpointer) terminated(uid types.UID) {
	c.setPhase(uid, checkpoint.Terminated, time.Time{})
}

func (c *checkpointer) setPhase(uid types.UID, phase checkpoint.Phase, deadline time.Time) {
	if c == nil || c.store == nil || !c.holds(uid) {
		return
	}
	err := c.store.SetPhase(uid, phase, deadline)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		c.log.Error(err, "Checkpoint: recording a pod's phase", "podUID", uid, "phase", phase)
	}
}

// forget removes a pod that is gone for good.
func (c *checkpointer) forget(uid types.UID) {
	if c == nil || c.store == nil || !c.holds(uid) {
		return
	}
	if err := c.store.Delete(uid); err != nil {
		c.log.Error(err, "Checkpoint: forgetting a pod", "podUID", uid)
		return
	}
	c.mu.Lock()
	delete(c.hashes, uid)
	c.mu.Unlock()
	c.log.V(2).Info("Checkpoint: pod forgotten", "podUID", uid)
}

// prune forgets every checkpointed pod nothing wants any more: a pod
// killed before its worker ever ran leaves no other trace to forget it by.
func (c *checkpointer) prune(wanted func(types.UID) bool) {
	if c == nil || c.store == nil {
		return
	}
	c.mu.Lock()
	var gone []types.UID
	for uid := range c.hashes {
		if !wanted(uid) {
			gone = append(gone, uid)
		}
	}
	c.mu.Unlock()
	for _, uid := range gone {
		c.forget(uid)
	}
}

func (c *checkpointer) holds(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.hashes[uid]
	return ok
}

// wasRestored reports whether the pod was brought back from the
// checkpoint at start.
func (c *checkpointer) wasRestored(uid types.UID) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restored[uid]
}
