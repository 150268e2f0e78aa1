package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ActionKind names one step SyncPod took.
type ActionKind string

const (
	ActionKillPod        ActionKind = "KillPod"
	ActionCreateSandbox  ActionKind = "CreateSandbox"
	ActionKillContainer  ActionKind = "KillContainer"
	ActionStartContainer ActionKind = "StartContainer"
)

// Action is one step of a SyncPod: what, on which container (empty for the
// pod or its sandbox), the resulting or affected ID, why, and how it ended.
type Action struct {
	Kind      ActionKind
	Container string
	ID        string
	Reason    string
	Err       error
	// Image says, for a StartContainer, how the container's image was had
	// (pulled or present).
	Image ImagePull
}

// SyncResult says what one SyncPod did and what the pod's state implies.
type SyncResult struct {
	Actions []Action
	// Terminal means the pod has finished: no container runs or will be
	// started again. Failed says it ended because an init container failed
	// under restartPolicy Never; Reason says why it ended.
	Terminal bool
	Failed   bool
	Reason   string
	// RetryAfter, if positive, is when a container's crash-loop back-off
	// ends: sync the pod again then.
	RetryAfter time.Duration
	// Warnings say what the runtime did otherwise than the pod asked (its
	// DNS settings cut to the resolver's bounds, say).
	Warnings []Warning
}

func (s *SyncResult) add(a Action) { s.Actions = append(s.Actions, a) }

// SyncHooks let the caller's probes and lifecycle hooks take part in a
// SyncPod without the runtime knowing them. The zero value runs no hook,
// and no startup probe has passed.
type SyncHooks struct {
	// Started reports whether the startup probe of a running instance has
	// passed: a sidecar with a startup probe holds back the next init
	// container and the app containers until it has.
	Started func(containerID string) bool
	// PostStart runs the container's postStart hook right after its start,
	// before the next container starts; podIPs are the sandbox's. It is
	// called only for a container with such a hook. An error (the caller
	// has dealt with the container) stops the starts of this sync after an
	// init container, whose successors need it.
	PostStart func(ctx context.Context, c *corev1.Container, containerID string, podIPs []string) error
	// PreStop runs the preStop hook of a running container the sync
	// replaces because its spec changed, of each container the sync stops
	// because the pod's sandbox is lost, and of each sidecar it stops once
	// the pod has finished.
	PreStop PreStopHook
	// PullingImage is told just before the image of a container is pulled
	// (a pull may take long: the caller's "Pulling" event must not wait
	// for its end).
	PullingImage func(container, image string)
}

// PreStopHook runs the preStop hook of a running container, within grace
// seconds, and returns the whole seconds left of them for the stop. It is
// called only for a container with such a hook; podIPs may be empty.
type PreStopHook func(ctx context.Context, c *corev1.Container, containerID string, podIPs []string, grace int64) int64

// SyncPod moves the pod's runtime state toward its spec: it (re)creates the
// sandbox when needed, replaces containers whose spec changed, runs init
// containers in order, and starts or restarts app containers as the
// restart policy and the crash-loop back-off allow. mounts are the resolved
// volume mounts by container name. status is the pod's current runtime
// status, typically from the PLEG cache; nil makes SyncPod fetch it. hooks
// gate sidecars on their startup probes and run postStart hooks.
//
// The error joins every failed step; Actions say which steps ran. A
// container waiting out its back-off yields a *BackoffError (matching
// ErrCrashLoopBackOff) and a positive RetryAfter.
func (r *Runtime) SyncPod(ctx context.Context, pod *corev1.Pod, mounts ContainerMounts, status *PodStatus, hooks SyncHooks) (SyncResult, error) {
	if err := checkIdentity(pod.Namespace, pod.Name, pod.UID); err != nil {
		return SyncResult{}, err // it would name the pod's log directory and cgroup
	}
	if status == nil {
		var err error
		if status, err = r.GetPodStatus(ctx, pod.UID); err != nil {
			return SyncResult{}, err
		}
	}
	p := computePlan(pod, status, hooks.Started)
	log := r.log.WithValues("pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
	res := SyncResult{Terminal: p.Done, Failed: p.Failed, Reason: p.DoneReason}

	if p.KillPod {
		reason := p.SandboxReason
		if p.Done {
			reason = p.DoneReason
		}
		log.V(1).Info("stopping pod", "reason", reason)
		err := r.stopPod(ctx, pod.UID, stopOptions{grace: podtypes.GracePeriod(pod), pod: pod, preStop: hooks.PreStop, appHooks: true})
		res.add(Action{Kind: ActionKillPod, Reason: reason, Err: err})
		if err != nil {
			return res, err
		}
	}
	if p.Done {
		return res, nil
	}
	if p.CreateSandbox || len(p.Start) > 0 {
		// Nothing is created for a pod asking what the node cannot honour.
		if err := r.checkPodSecurity(pod); err != nil {
			return res, err
		}
	}

	sandboxID, sandbox, ips := p.SandboxID, r.sandboxConfig(pod, p.SandboxAttempt), status.IPs
	if p.CreateSandbox {
		// The pod's cgroup, with the pod's limits, before anything runs
		// in it.
		if err := r.opts.Cgroups.EnsurePod(pod); err != nil {
			err = fmt.Errorf("%w: %w", ErrCreateSandbox, err)
			res.add(Action{Kind: ActionCreateSandbox, Reason: p.SandboxReason, Err: err})
			return res, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	} else if sandboxID != "" {
		// A pod found running (after a restart) counts in its QoS class.
		if err := r.opts.Cgroups.TrackPod(pod); err != nil {
			log.Error(err, "counting the pod in its QoS cgroup")
		}
	}
	if p.CreateSandbox {
		var err error
		sandbox, res.Warnings, err = r.newSandboxConfig(pod, p.SandboxAttempt)
		for _, w := range res.Warnings {
			log.Info("The pod's DNS settings were not applied as asked", "reason", w.Reason, "message", w.Message)
		}
		id := ""
		if err == nil {
			id, err = r.runSandbox(ctx, pod, sandbox)
		}
		res.add(Action{Kind: ActionCreateSandbox, ID: id, Reason: p.SandboxReason, Err: err})
		if err != nil {
			return res, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		log.V(1).Info("created sandbox", "id", id, "attempt", p.SandboxAttempt, "reason", p.SandboxReason)
		sandboxID, ips = id, nil
		r.removeEmptySandboxes(ctx, status)
		// The hosts file names the pod's addresses.
		if needsPodIP(pod) || (len(p.Start) > 0 && !pod.Spec.HostNetwork && r.opts.PodsDir != "") {
			if ips, err = r.sandboxIPs(ctx, id); err != nil {
				return res, err
			}
		}
	}

	if len(p.Kill) > 0 {
		errs := r.stopReplaced(ctx, pod, p.Kill, podtypes.GracePeriod(pod), ips, hooks.PreStop)
		for i, k := range p.Kill {
			res.add(Action{Kind: ActionKillContainer, Container: k.Name, ID: k.ID, Reason: k.Reason, Err: errs[i]})
		}
		// A container that may still run must not get a second instance.
		if err := errors.Join(errs...); err != nil {
			return res, err
		}
	}

	var errs []error
	if len(p.Resize) > 0 {
		for _, a := range r.resizeContainers(ctx, pod, status, p.Resize) {
			res.add(a)
			if a.Err != nil {
				errs = append(errs, a.Err)
			}
		}
	}
	var hosts *Mount
	if len(p.Start) > 0 {
		// Written once the sandbox has its addresses, before any
		// container that mounts it is created.
		var err error
		if hosts, err = r.hostsMount(pod, ips); err != nil {
			return res, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	env := podEnv{pod: pod, ips: ips, hostIPs: r.opts.HostIPs, sources: r.opts.Sources, services: r.opts.Services, allocatable: r.opts.Allocatable, log: r.log}
	for _, s := range p.Start {
		if err := ctx.Err(); err != nil {
			// A kill cancels the sync: what is left to start must not
			// hold the pod's grace period back.
			errs = append(errs, err)
			break
		}
		c := specContainer(pod, s)
		if wait := r.inBackoff(pod, c, s.Previous); wait != nil {
			res.add(Action{Kind: ActionStartContainer, Container: c.Name, Reason: s.Reason, Err: wait})
			if left := wait.Until.Sub(r.clock.Now()); res.RetryAfter == 0 || left < res.RetryAfter {
				res.RetryAfter = left
			}
			errs = append(errs, wait)
			continue
		}
		restarts := s.Previous.nextRestartCount()
		if s.Previous != nil && s.Previous.neverStarted() {
			// Never started (an agent killed while creating or starting it,
			// or a start that failed): it must not run later beside its
			// replacement, nor stay as a dead instance that never was.
			err := r.rt.RemoveContainer(ctx, s.Previous.ID)
			if err != nil && !isNotFound(err) {
				res.add(Action{Kind: ActionStartContainer, Container: c.Name, Reason: s.Reason, Err: err})
				errs = append(errs, fmt.Errorf("container %q: removing the instance that never started: %w: %w", c.Name, ErrStillStarting, err))
				continue
			}
		}
		if s.TargetMissing {
			err := fmt.Errorf("container %q: %w: its target container %q does not run", c.Name, ErrCreateContainer, pod.Spec.EphemeralContainers[s.Index].TargetContainerName)
			res.add(Action{Kind: ActionStartContainer, Container: c.Name, Reason: s.Reason, Err: err})
			errs = append(errs, err)
			continue
		}
		ms := mounts[c.Name]
		if hosts != nil && !mountsEtcHosts(c) {
			ms = append(slices.Clip(ms), *hosts)
		}
		var pulling func(string)
		if hooks.PullingImage != nil {
			pulling = func(image string) { hooks.PullingImage(c.Name, image) }
		}
		r.metrics.containerStarting(s)
		id, pulled, err := r.startContainer(ctx, pod, c, restarts, sandboxID, sandbox, ms, env, s.TargetID, pulling)
		res.add(Action{Kind: ActionStartContainer, Container: c.Name, ID: id, Reason: s.Reason, Err: err, Image: pulled})
		if err != nil {
			if se := (*SecurityError)(nil); !errors.As(err, &se) { // which names the container already
				err = fmt.Errorf("container %q: %w", c.Name, err)
			}
			errs = append(errs, err)
			continue
		}
		log.V(1).Info("started container", "container", c.Name, "id", id, "restartCount", restarts, "reason", s.Reason)
		if hooks.PostStart == nil || c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
			continue
		}
		if len(ips) == 0 {
			// A new sandbox's address is asked only when a hook may need it.
			ips, _ = r.sandboxIPs(ctx, sandboxID)
		}
		if err := hooks.PostStart(ctx, c, id, ips); err != nil && s.Init {
			break
		}
	}
	return res, errors.Join(errs...)
}

// removeEmptySandboxes removes the pod's sandboxes that are not ready and
// hold no container, once a new one has replaced them: what a
// RunPodSandbox interrupted by an agent's crash, or a sandbox that died
// before its containers were made, leaves. Sandboxes that hold containers
// stay for the collector: their containers' ends are the pod's history.
// Best effort: the collector removes what this misses.
func (r *Runtime) removeEmptySandboxes(ctx context.Context, status *PodStatus) {
	holding := map[string]bool{}
	for _, c := range status.Containers {
		holding[c.SandboxID] = true
	}
	for _, sb := range status.Sandboxes {
		if sb.State == SandboxReady || holding[sb.ID] {
			continue
		}
		if err := r.rt.RemovePodSandbox(ctx, sb.ID); err != nil && !isNotFound(err) {
			r.log.V(1).Info("Removing a dead sandbox failed; the collector will", "sandbox", sb.ID, "err", err)
		}
	}
}

func specContainer(pod *corev1.Pod, s startStep) *corev1.Container {
	switch {
	case s.Init:
		return &pod.Spec.InitContainers[s.Index]
	case s.Ephemeral:
		return podtypes.EphemeralContainer(&pod.Spec.EphemeralContainers[s.Index])
	}
	return &pod.Spec.Containers[s.Index]
}

// inBackoff applies the crash-loop back-off to replacing an exited
// instance; it returns nil if the replacement may start now.
func (r *Runtime) inBackoff(pod *corev1.Pod, c *corev1.Container, prev *ContainerStatus) *BackoffError {
	if prev == nil || prev.State != ContainerStateExited || prev.neverStarted() {
		return nil // a start that failed is the workers' back-off to pace
	}
	key := backoffKey(pod.UID, c.Name, HashContainer(c))
	left, delay := r.backoff.wait(key, prev.StartedAt, prev.FinishedAt)
	if left <= 0 {
		return nil
	}
	return &BackoffError{Container: c.Name, Until: r.clock.Now().Add(left), Delay: delay}
}

func needsPodIP(pod *corev1.Pod) bool {
	for _, c := range podtypes.Containers(&pod.Spec) {
		for _, e := range c.Env {
			if f := e.ValueFrom; f != nil && f.FieldRef != nil &&
				(f.FieldRef.FieldPath == "status.podIP" || f.FieldRef.FieldPath == "status.podIPs") {
				return true
			}
		}
	}
	return false
}

func (r *Runtime) sandboxIPs(ctx context.Context, id string) ([]string, error) {
	resp, err := r.rt.PodSandboxStatus(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: status: %w", id, err)
	}
	return sandboxIPs(resp.GetStatus().GetNetwork()), nil
}
