package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// staleCreated is how old a container that never started must be before
// GarbageCollect removes it: a younger one may be about to start.
const staleCreated = time.Minute

// GarbageCollect removes dead containers and sandboxes.
//
// For each container name of a pod it keeps the newest
// Options.MaxDeadPerContainer exited instances, so that the restart count
// and the last termination survive; older ones go, as do containers that
// never started within a minute. A sandbox goes once it is not ready, holds
// no container, and is not the pod's newest. For a pod for which deleted
// returns true (the agent no longer has it and its sources are all ready)
// every dead container and sandbox goes, and its log directory with them.
// Running containers are never touched: killing is KillPod's business.
// deleted may be nil.
func (r *Runtime) GarbageCollect(ctx context.Context, deleted func(types.UID) bool) error {
	pods, err := r.GetPods(ctx)
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	var errs []error
	for _, p := range pods {
		gone := deleted != nil && deleted(p.ID)
		if err := r.collectPod(ctx, p, gone); err != nil {
			errs = append(errs, err)
		}
	}
	r.backoff.prune()
	r.pullBackoff.prune()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	return nil
}

func (r *Runtime) collectPod(ctx context.Context, p *Pod, gone bool) error {
	keep := r.opts.MaxDeadPerContainer
	if gone {
		keep = 0
	}
	now := r.clock.Now()
	var errs []error
	exited := map[string]int{} // by container name, newest first
	holding := map[string]bool{}
	for _, c := range p.Containers {
		remove := false
		switch c.State {
		case ContainerStateExited:
			exited[c.Name]++
			remove = exited[c.Name] > keep
		case ContainerStateCreated:
			remove = gone || now.Sub(c.CreatedAt) > staleCreated
		}
		if remove {
			if err := r.rt.RemoveContainer(ctx, c.ID); err != nil && !isNotFound(err) {
				errs = append(errs, fmt.Errorf("pod %s: removing container %s: %w", p.ID, c.ID, err))
				holding[c.SandboxID] = true
			}
			continue
		}
		holding[c.SandboxID] = true
	}
	removedAll := true
	for i, sb := range p.Sandboxes {
		if sb.State == SandboxReady || holding[sb.ID] || (i == 0 && !gone) {
			removedAll = false
			continue
		}
		if err := r.rt.RemovePodSandbox(ctx, sb.ID); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("pod %s: removing sandbox %s: %w", p.ID, sb.ID, err))
			removedAll = false
		}
	}
	if gone && removedAll && len(holding) == 0 && p.Name != "" && p.Namespace != "" {
		if err := r.removeLogDir(p.Namespace, p.Name, p.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
