package status

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podPhase derives the pod's phase from its container statuses, as the
// kubelet's getPhase does with container restart rules: a container that
// exited counts as restarting if its restart rules and policy (else the
// pod's policy) restart it after that exit. terminal says nothing of the
// pod will run again (it finished, or was stopped): the phase is then
// Succeeded or Failed whatever the policies.
func podPhase(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus, terminal bool) corev1.PodPhase {
	restarts := func(c *corev1.Container, exitCode int32) bool {
		return podtypes.RestartsAfterExit(&pod.Spec, c, exitCode)
	}
	pendingInit, failedInit := 0, 0
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := statusOf(initStatuses, c.Name)
		sidecar := podtypes.IsSidecar(c)
		switch {
		case cs == nil:
			pendingInit++
		case sidecar:
			// A sidecar has started once it runs, or ran before.
			if cs.State.Running == nil && cs.LastTerminationState.Terminated == nil && cs.State.Terminated == nil {
				pendingInit++
			}
		case cs.State.Running != nil:
			pendingInit++
		case cs.State.Terminated != nil:
			if code := cs.State.Terminated.ExitCode; code != 0 && !restarts(c, code) {
				failedInit++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				if last.ExitCode != 0 && !restarts(c, last.ExitCode) {
					failedInit++
				}
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}

	unknown, running, waiting, stopped, succeeded, restarting := 0, 0, 0, 0, 0, 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := statusOf(statuses, c.Name)
		switch {
		case cs == nil:
			unknown++
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			code := cs.State.Terminated.ExitCode
			if code == 0 {
				succeeded++
			}
			if restarts(c, code) {
				restarting++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				stopped++
				if restarts(c, last.ExitCode) {
					restarting++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	if failedInit > 0 {
		return corev1.PodFailed // an init container failed and is not retried
	}
	switch {
	case pendingInit > 0 && !terminal:
		return corev1.PodPending
	case waiting > 0 && !terminal:
		return corev1.PodPending
	case running > 0 && unknown == 0 && !terminal:
		return corev1.PodRunning
	case terminal:
		// Nothing runs or will run again.
		if pendingInit == 0 && stopped == len(pod.Spec.Containers) && stopped == succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case restarting > 0:
			return corev1.PodRunning
		case stopped == succeeded:
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	}
	return corev1.PodPending
}

func statusOf(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}
