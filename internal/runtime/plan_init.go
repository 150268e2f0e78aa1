package runtime

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// planInit plans the init containers of a pod whose sandbox is usable, and
// reports whether initialization is complete, so that the app containers
// may start in this same sync.
//
// Init containers run one at a time, in order, each to completion. Only the
// instances in the current sandbox count: a new sandbox starts over. The
// scan runs from the last init container back, because the newest one that
// ran says how far initialization got even if older ones were removed.
// Sidecars (init containers with restartPolicy Always) count as done once
// running and, if they have a startup probe, once it passed; they are kept
// running from then on.
func planInit(p *plan, pod *corev1.Pod, status *PodStatus, started func(containerID string) bool) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	if anyAppContainerIn(pod, status, p.SandboxID) {
		planSidecars(p, pod, status, len(inits))
		return true
	}
	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		st := activeContainer(status, c.Name, p.SandboxID)
		if st == nil {
			continue
		}
		planSidecars(p, pod, status, i)
		done := false // whether init container i has done its part
		switch {
		case st.State == ContainerStateRunning:
			done = podtypes.IsSidecar(c) && (c.StartupProbe == nil || started != nil && started(st.ID))
		case st.State == ContainerStateExited && podtypes.IsSidecar(c):
			p.startInit(i, c, "sidecar "+restartReason(st), st)
		case st.State == ContainerStateExited && st.ExitCode == 0:
			done = true
		case st.State == ContainerStateExited && !podtypes.RestartsAfterExit(&pod.Spec, c, st.ExitCode):
			p.KillPod = true
			*p = finished(*p, true, "init container "+c.Name+" "+restartReason(st)+" and its restart policy does not restart it")
		case st.State == ContainerStateExited && pod.DeletionTimestamp == nil:
			p.startInit(i, c, restartReason(st), st)
		case st.State != ContainerStateExited: // created or unknown: start over
			p.killIfUnknown(st)
			p.startInit(i, c, restartReason(st), st)
		}
		if !done {
			return false
		}
		if i == len(inits)-1 {
			return true
		}
		next := &inits[i+1]
		p.startInit(i+1, next, "previous init container done", status.LatestContainer(next.Name))
		return false
	}
	first := &inits[0]
	p.startInit(0, first, "initialization starts", status.LatestContainer(first.Name))
	return false
}

func (p *plan) startInit(i int, c *corev1.Container, reason string, prev *ContainerStatus) {
	p.Start = append(p.Start, startStep{Init: true, Index: i, Name: c.Name, Reason: reason, Previous: prev})
}

// planSidecars keeps the sidecars among the first n init containers
// running: a stopped one restarts (restartPolicy Always is theirs), a
// running one whose spec changed is replaced.
func planSidecars(p *plan, pod *corev1.Pod, status *PodStatus, n int) {
	if pod.DeletionTimestamp != nil {
		return
	}
	for i := range pod.Spec.InitContainers[:n] {
		c := &pod.Spec.InitContainers[i]
		if !podtypes.IsSidecar(c) {
			continue
		}
		st := activeContainer(status, c.Name, p.SandboxID)
		switch {
		case st == nil:
			p.startInit(i, c, "sidecar not created", status.LatestContainer(c.Name))
		case st.State == ContainerStateRunning && specChanged(c, st):
			p.Kill = append(p.Kill, killStep{ID: st.ID, Name: c.Name, Reason: "spec changed", PreStop: true})
			p.startInit(i, c, "spec changed", st)
		case st.State != ContainerStateRunning:
			p.killIfUnknown(st)
			p.startInit(i, c, "sidecar "+restartReason(st), st)
		}
	}
}

// activeContainer returns the newest instance of the named container in
// the given sandbox.
func activeContainer(status *PodStatus, name, sandboxID string) *ContainerStatus {
	for i := range status.Containers {
		if c := &status.Containers[i]; c.Name == name && c.SandboxID == sandboxID {
			return c
		}
	}
	return nil
}

func anyAppContainerIn(pod *corev1.Pod, status *PodStatus, sandboxID string) bool {
	for i := range pod.Spec.Containers {
		if activeContainer(status, pod.Spec.Containers[i].Name, sandboxID) != nil {
			return true
		}
	}
	return false
}
