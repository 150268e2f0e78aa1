package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// checkpointingSyncer is the syncer with the checkpoint kept in step: a
// termination is recorded as it starts (with its deadline) and as it ends,
// and a pod that is gone for good is forgotten.
type checkpointingSyncer struct {
	*syncer
	ckpt *checkpointer
}

var _ podworkers.Syncer = checkpointingSyncer{}

func (c checkpointingSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, gracePeriod int64, statusFn func(*corev1.PodStatus)) error {
	c.ckpt.terminating(pod.UID, gracePeriod)
	if err := c.syncer.SyncTerminatingPod(ctx, pod, gracePeriod, statusFn); err != nil {
		return err
	}
	c.ckpt.terminated(pod.UID)
	return nil
}

func (c checkpointingSyncer) SyncTerminatingRuntimePod(ctx context.Context, rp podworkers.RuntimePod) error {
	if err := c.syncer.SyncTerminatingRuntimePod(ctx, rp); err != nil {
		return err
	}
	if !c.desired(rp.UID) {
		c.ckpt.forget(rp.UID)
	}
	return nil
}

func (c checkpointingSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	if err := c.syncer.SyncTerminatedPod(ctx, pod); err != nil {
		return err
	}
	if !c.desired(pod.UID) {
		c.ckpt.forget(pod.UID)
	}
	return nil
}
