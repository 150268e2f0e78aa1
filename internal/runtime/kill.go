package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// KillPod stops and removes every container and sandbox of a pod, then its
// cgroups. pod may be nil (a pod found in the runtime with no spec); the
// pod's identity is then running.ID, and its grace period the one recorded
// in its containers' annotations. gracePeriodOverride, if set, wins over
// the pod's; 0 stops at once.
//
// The app containers stop in parallel, each given the grace period, then
// the sidecars one at a time, last declared first, each given what is
// left of it; then the sandboxes stop. The runtime is listed afresh, so a
// container created after running was observed is killed too. The pod's
// crash-loop back-off is forgotten; its log directory stays until
// GarbageCollect.
func (r *Runtime) KillPod(ctx context.Context, pod *corev1.Pod, running Pod, gracePeriodOverride *int64) error {
	uid, opts, err := killTarget(pod, running, gracePeriodOverride)
	if err != nil {
		return err
	}
	opts.remove = true
	if err := r.stopPod(ctx, uid, opts); err != nil {
		return err
	}
	r.backoff.forget(uid)
	r.pullBackoff.forget(uid)
	return nil
}

// StopPod stops every container of a pod, with the grace period as KillPod
// gives it, then its sandboxes, and leaves them in place: once it returns
// nothing of the pod runs, and KillPod (typically called later, off the
// path of whatever waited for the stop) removes what is left. The pod's
// crash-loop back-off is kept until then.
//
// preStop, if set, runs each sidecar's preStop hook right before its stop,
// within what is left of the grace period, once the containers it served
// have stopped; the caller runs the other containers' hooks before the call.
func (r *Runtime) StopPod(ctx context.Context, pod *corev1.Pod, running Pod, gracePeriodOverride *int64, preStop PreStopHook) error {
	uid, opts, err := killTarget(pod, running, gracePeriodOverride)
	if err != nil {
		return err
	}
	opts.preStop = preStop
	return r.stopPod(ctx, uid, opts)
}

// killTarget returns the UID KillPod and StopPod act on and the grace
// period they give.
func killTarget(pod *corev1.Pod, running Pod, gracePeriodOverride *int64) (types.UID, stopOptions, error) {
	uid := running.ID
	if uid == "" && pod != nil {
		uid = pod.UID
	}
	if uid == "" {
		return "", stopOptions{}, fmt.Errorf("%w: neither the pod nor the running pod has a UID", ErrKillPod)
	}
	if err := CheckUID(uid); err != nil {
		return "", stopOptions{}, fmt.Errorf("%w: %w", ErrKillPod, err)
	}
	var opts stopOptions
	switch {
	case gracePeriodOverride != nil:
		opts.grace = max(*gracePeriodOverride, 0)
	case pod != nil:
		opts.grace = podtypes.GracePeriod(pod)
	default:
		opts.graceFromAnnotations = true
	}
	opts.pod = pod
	return uid, opts, nil
}

type stopOptions struct {
	grace int64
	// graceFromAnnotations takes the grace period from the containers'
	// annotations instead (the largest), for a pod without a spec.
	graceFromAnnotations bool
	// remove also removes the containers, sandboxes and cgroups.
	remove bool
	// pod, if known, says which containers are sidecars, to stop last.
	pod *corev1.Pod
	// preStop runs the sidecars' preStop hooks, and the other containers'
	// too with appHooks: a sync that stops the pod (its sandbox lost) runs
	// them all; the agent's termination runs the app containers' itself,
	// before it stops the pod.
	preStop  PreStopHook
	appHooks bool
}

// stopPod stops everything of the pod the runtime holds.
func (r *Runtime) stopPod(ctx context.Context, uid types.UID, opts stopOptions) error {
	sandboxes, containers, err := r.listPod(ctx, uid)
	if err != nil {
		return fmt.Errorf("pod %s: %w: %w", uid, ErrKillPod, err)
	}
	grace := opts.grace
	if opts.graceFromAnnotations {
		grace = graceFromAnnotations(containers)
	}
	var kills []killStep
	for _, c := range containers {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			kills = append(kills, killStep{ID: c.GetId(), Name: c.GetMetadata().GetName(), PreStop: opts.appHooks})
		}
	}
	errs := r.stopInOrder(ctx, opts.pod, kills, grace, opts.preStop)
	for _, sb := range sandboxes {
		if err := r.rt.StopPodSandbox(ctx, sb.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stopping sandbox %s: %w", sb.GetId(), err))
		}
	}
	if opts.remove && errors.Join(errs...) == nil {
		errs = append(errs, r.removePod(ctx, uid, sandboxes, containers)...)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pod %s: %w: %w", uid, ErrKillPod, err)
	}
	return nil
}

func graceFromAnnotations(containers []*runtimeapi.Container) int64 {
	grace, found := int64(0), false
	for _, c := range containers {
		if g, ok := gracePeriodOf(c.GetAnnotations()); ok && (!found || g > grace) {
			grace, found = g, true
		}
	}
	if !found {
		return int64(corev1.DefaultTerminationGracePeriodSeconds)
	}
	return grace
}

// stopInOrder stops the containers of a pod as the kubelet does: sidecars
// serve the other containers to their end. Those stop first, in parallel;
// then the sidecars, one at a time in reverse order of declaration, each
// with the whole seconds left of the grace period, so that the last is
// killed no later than grace seconds after the call; a sidecar's preStop
// hook runs right before its stop, on that time. Without a spec every
// container stops at once.
func (r *Runtime) stopInOrder(ctx context.Context, pod *corev1.Pod, kills []killStep, grace int64, preStop PreStopHook) []error {
	deadline := r.clock.Now().Add(time.Duration(grace) * time.Second)
	sidecars := map[string]int{} // name -> index among the init containers
	if pod != nil {
		for i := range pod.Spec.InitContainers {
			if podtypes.IsSidecar(&pod.Spec.InitContainers[i]) {
				sidecars[pod.Spec.InitContainers[i].Name] = i
			}
		}
	}
	var first, last []killStep
	for _, k := range kills {
		if _, ok := sidecars[k.Name]; ok {
			last = append(last, k)
		} else {
			first = append(first, k)
		}
	}
	var errs []error
	if pod != nil {
		errs = r.stopReplaced(ctx, pod, first, grace, nil, preStop)
	} else {
		errs = r.stopContainers(ctx, first, grace)
	}
	slices.SortStableFunc(last, func(a, b killStep) int { return sidecars[b.Name] - sidecars[a.Name] })
	for _, k := range last {
		left := max(int64(math.Floor(deadline.Sub(r.clock.Now()).Seconds())), 0)
		if c := &pod.Spec.InitContainers[sidecars[k.Name]]; preStop != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			left = preStop(ctx, c, k.ID, nil, left)
		}
		errs = append(errs, r.stopContainers(ctx, []killStep{k}, left)...)
	}
	return errs
}

// stopReplaced stops the containers a sync kills, in parallel, each after
// its preStop hook if it has one and runs: the hook and the stop share the
// grace period.
func (r *Runtime) stopReplaced(ctx context.Context, pod *corev1.Pod, kills []killStep, grace int64, ips []string, preStop PreStopHook) []error {
	errs := make([]error, len(kills))
	var wg sync.WaitGroup
	for i, k := range kills {
		wg.Go(func() {
			left := grace
			if c := podContainer(pod, k.Name); k.PreStop && preStop != nil && c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
				left = preStop(ctx, c, k.ID, ips, grace)
			}
			errs[i] = r.stopContainers(ctx, []killStep{k}, left)[0]
		})
	}
	wg.Wait()
	return errs
}

// podContainer returns the spec of the pod's container (init, app or
// ephemeral) named name, or nil.
func podContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, c := range podtypes.Containers(&pod.Spec) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// stopContainers stops containers in parallel, each with the grace period
// as its timeout, and returns one error (or nil) per container, in order.
func (r *Runtime) stopContainers(ctx context.Context, kills []killStep, grace int64) []error {
	errs := make([]error, len(kills))
	var wg sync.WaitGroup
	for i, k := range kills {
		wg.Go(func() {
			if err := r.rt.StopContainer(ctx, k.ID, grace); err != nil && !isNotFound(err) {
				errs[i] = fmt.Errorf("stopping container %q (%s): %w", k.Name, k.ID, err)
			}
		})
	}
	wg.Wait()
	return errs
}

// removePod removes stopped containers, then sandboxes, then the pod's
// cgroups, which the runtime leaves behind.
func (r *Runtime) removePod(ctx context.Context, uid types.UID, sandboxes []*runtimeapi.PodSandbox, containers []*runtimeapi.Container) []error {
	var errs []error
	for _, c := range containers {
		if err := r.rt.RemoveContainer(ctx, c.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("removing container %s: %w", c.GetId(), err))
		}
	}
	for _, sb := range sandboxes {
		if err := r.rt.RemovePodSandbox(ctx, sb.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("removing sandbox %s: %w", sb.GetId(), err))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if err := r.opts.Cgroups.RemovePod(ctx, uid); err != nil {
		errs = append(errs, err)
	}
	return errs
}
