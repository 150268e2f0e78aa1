package runtime

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// plan is what one SyncPod does to move a pod's runtime state toward its
// spec. computePlan derives it from the spec and the observed status alone;
// the crash-loop back-off and every runtime call are the executor's.
type plan struct {
	// KillPod stops every container and sandbox of the pod before anything
	// else; CreateSandbox then runs a new sandbox.
	KillPod       bool
	CreateSandbox bool
	// SandboxID is the sandbox that new containers join when none is
	// created; SandboxAttempt is the attempt number of the sandbox used.
	SandboxID      string
	SandboxAttempt uint32
	// SandboxReason says why the sandbox is (re)created.
	SandboxReason string

	// Kill lists containers to stop before any start.
	Kill []killStep
	// Start lists containers to start, in order. At most one init
	// container that is not a sidecar is started per sync.
	Start []startStep
	// Resize lists running containers to update in place to their spec's
	// cpu and memory, after the kills and before the starts.
	Resize []resizeStep

	// Done means the pod has finished: nothing of it will run again. Failed
	// says an init container failed under restartPolicy Never.
	Done       bool
	Failed     bool
	DoneReason string
}

type killStep struct {
	ID, Name, Reason string
	// PreStop: the container runs, and its preStop hook runs before the
	// stop, as before any stop of a running container with a spec.
	PreStop bool
}

type startStep struct {
	// Init or Ephemeral, and Index, locate the container in the spec.
	Init      bool
	Ephemeral bool
	Index     int
	Name      string
	Reason    string
	// Previous is the newest earlier instance, or nil. Its restart count
	// continues, and if it exited, the back-off applies.
	Previous *ContainerStatus
	// TargetID is the running container whose process namespace an
	// ephemeral container joins; TargetMissing: it targets one that does
	// not run, and cannot start.
	TargetID      string
	TargetMissing bool
}

// computePlan decides what SyncPod does. It is a pure function of the pod
// spec, the observed status (nil means the runtime holds nothing) and
// which running instances passed their startup probe (nil: none).
func computePlan(pod *corev1.Pod, status *PodStatus, started func(containerID string) bool) plan {
	if status == nil {
		status = &PodStatus{ID: pod.UID}
	}
	need, attempt, reason := sandboxNeeded(pod, status)
	if need {
		return planNewSandbox(pod, status, attempt, reason)
	}
	p := plan{SandboxID: status.Sandboxes[0].ID, SandboxAttempt: status.Sandboxes[0].Attempt}
	if planInit(&p, pod, status, started) {
		planApp(&p, pod, status)
	}
	if !p.KillPod {
		planEphemeral(&p, pod, status)
	}
	return p
}

// sandboxNeeded reports whether the pod needs a new sandbox, with which
// attempt number, and why.
func sandboxNeeded(pod *corev1.Pod, status *PodStatus) (bool, uint32, string) {
	if len(status.Sandboxes) == 0 {
		return true, 0, "no sandbox"
	}
	newest := status.Sandboxes[0]
	next := newest.Attempt + 1
	ready := 0
	for _, s := range status.Sandboxes {
		if s.State == SandboxReady {
			ready++
		}
	}
	switch {
	case ready > 1:
		return true, next, "several sandboxes are ready"
	case newest.State != SandboxReady:
		return true, next, "sandbox is not ready"
	case newest.HostNetwork != pod.Spec.HostNetwork:
		return true, next, "network mode changed"
	case !pod.Spec.HostNetwork && newest.IP == "":
		return true, next, "sandbox has no IP"
	}
	return false, 0, ""
}

func planNewSandbox(pod *corev1.Pod, status *PodStatus, attempt uint32, reason string) plan {
	p := plan{
		KillPod:        len(status.Sandboxes) > 0 || len(status.RunningContainers()) > 0,
		CreateSandbox:  true,
		SandboxAttempt: attempt,
		SandboxReason:  reason,
	}
	// A pod that never restarts does not come back after losing its
	// sandbox, unless it never got as far as creating a container. (The
	// kubelet looks at the pod's policy alone here, whatever its
	// containers' own policies say.)
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && attempt > 0 && len(status.Containers) > 0 {
		return finished(p, false, "sandbox lost ("+reason+") and restartPolicy is Never")
	}
	var apps []startStep
	appCreated := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		prev := status.LatestContainer(c.Name)
		appCreated = appCreated || prev != nil
		if podtypes.RunsOnce(&pod.Spec, c) && succeeded(prev) {
			continue
		}
		apps = append(apps, startStep{Index: i, Name: c.Name, Reason: "new sandbox", Previous: prev})
	}
	if len(apps) == 0 && appCreated {
		return finished(p, false, "every container succeeded")
	}
	// A new sandbox starts over: the first init container runs again.
	if len(pod.Spec.InitContainers) > 0 {
		c := &pod.Spec.InitContainers[0]
		p.Start = []startStep{{Init: true, Index: 0, Name: c.Name, Reason: "new sandbox", Previous: status.LatestContainer(c.Name)}}
		return p
	}
	p.Start = apps
	return p
}

// finished turns p into the plan of a pod that has ended: stop what may
// still run, create and start nothing.
func finished(p plan, failed bool, reason string) plan {
	p.CreateSandbox, p.SandboxAttempt, p.SandboxReason = false, 0, ""
	p.Start = nil
	p.Done, p.Failed, p.DoneReason = true, failed, reason
	return p
}

func succeeded(c *ContainerStatus) bool {
	return c != nil && c.State == ContainerStateExited && c.ExitCode == 0
}

// shouldRestart applies the restart rules and policies (the container's,
// else the pod's) to a container that is not running.
func shouldRestart(pod *corev1.Pod, spec *corev1.Container, c *ContainerStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if c == nil || c.State != ContainerStateExited {
		return true // never ran, or stuck in created or unknown
	}
	return podtypes.RestartsAfterExit(&pod.Spec, spec, c.ExitCode)
}

func restartReason(c *ContainerStatus) string {
	if c == nil {
		return "not created"
	}
	if c.State == ContainerStateExited {
		return fmt.Sprintf("exited with code %d", c.ExitCode)
	}
	return "in state " + string(c.State)
}

// killIfUnknown adds a kill of a container in an unknown state, which might
// still run and must not run twice.
func (p *plan) killIfUnknown(c *ContainerStatus) {
	if c != nil && c.State == ContainerStateUnknown {
		p.Kill = append(p.Kill, killStep{ID: c.ID, Name: c.Name, Reason: "state unknown before restart"})
	}
}
