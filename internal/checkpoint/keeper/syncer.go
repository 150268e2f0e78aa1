package keeper

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// Syncer returns inner with the checkpoint kept in step. It waits for the
// checkpoint where the next step must not happen before the checkpoint
// knows of it: a pod runs once its record is written, a termination is
// recorded before its stop, and a completed pod's final status before its
// containers are removed. status returns the pod's newest status, and
// desired whether a source still wants it.
func (c *Keeper) Syncer(inner podworkers.Syncer, status func(types.UID) *corev1.PodStatus, desired func(types.UID) bool) podworkers.Syncer {
	return checkpointingSyncer{Syncer: inner, ckpt: c, status: status, desired: desired}
}

type checkpointingSyncer struct {
	podworkers.Syncer
	ckpt    *Keeper
	status  func(types.UID) *corev1.PodStatus
	desired func(types.UID) bool
}

func (c checkpointingSyncer) SyncPod(ctx context.Context, typ podworkers.UpdateType, pod *corev1.Pod) (bool, error) {
	// Write errors are the writer's to log and retry; the pod runs anyway.
	_ = c.ckpt.durable(ctx, pod.UID)
	terminal, err := c.Syncer.SyncPod(ctx, typ, pod)
	if st := c.status(pod.UID); terminal && st != nil && c.desired(pod.UID) {
		// Recorded before the termination starts: from now on no restart
		// of the agent runs this UID again.
		c.ckpt.completed(pod.UID, *st)
	}
	return terminal, err
}

func (c checkpointingSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, gracePeriod int64, statusFn func(*corev1.PodStatus)) error {
	completed := c.ckpt.FinalStatus(pod.UID) != nil
	if !completed {
		c.ckpt.terminating(pod.UID, gracePeriod)
		_ = c.ckpt.durable(ctx, pod.UID)
	}
	if err := c.Syncer.SyncTerminatingPod(ctx, pod, gracePeriod, statusFn); err != nil {
		return err
	}
	// Only a pod that completed (SyncPod found it terminal, and recorded
	// that before the stop) is recorded with its final status. A pod
	// killed because its source dropped it may be wanted again by now (a
	// manifest removed and put back: the same UID); it ran to no end of
	// its own, and is run afresh.
	if st := c.status(pod.UID); completed && st != nil {
		c.ckpt.completed(pod.UID, *st) // with the statuses the stop observed
	} else {
		c.ckpt.terminated(pod.UID)
	}
	return nil
}

func (c checkpointingSyncer) SyncTerminatingRuntimePod(ctx context.Context, rp podworkers.RuntimePod) error {
	if err := c.Syncer.SyncTerminatingRuntimePod(ctx, rp); err != nil {
		return err
	}
	c.ckpt.forgetIf(rp.UID, c.gone)
	return nil
}

func (c checkpointingSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	// The containers go now, and with them what they ended with.
	_ = c.ckpt.durable(ctx, pod.UID)
	if err := c.Syncer.SyncTerminatedPod(ctx, pod); err != nil {
		return err
	}
	c.ckpt.forgetIf(pod.UID, c.gone)
	return nil
}

func (c checkpointingSyncer) gone(uid types.UID) bool { return !c.desired(uid) }
