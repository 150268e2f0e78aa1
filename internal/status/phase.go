package status

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podPhase derives the pod's phase from its container statuses, as the
// kubelet's getPhase does. terminal says nothing of the pod will run again
// (it finished, or was stopped): the phase is then Succeeded or Failed
// whatever the restart policy.
func podPhase(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus, terminal bool) corev1.PodPhase {
	policy := pod.Spec.RestartPolicy
	pendingInit, failedInit := 0, 0
	for _, c := range pod.Spec.InitContainers {
		cs := statusOf(initStatuses, c.Name)
		sidecar := podtypes.IsSidecar(&c)
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
			if cs.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				if last.ExitCode != 0 {
					failedInit++
				}
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}

	unknown, running, waiting, stopped, succeeded := 0, 0, 0, 0, 0
	for _, c := range pod.Spec.Containers {
		cs := statusOf(statuses, c.Name)
		switch {
		case cs == nil:
			unknown++
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++ // restarting
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	if failedInit > 0 && policy == corev1.RestartPolicyNever {
		return corev1.PodFailed
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
		if failedInit == 0 && pendingInit == 0 && stopped == len(pod.Spec.Containers) && stopped == succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case policy == corev1.RestartPolicyAlways:
			return corev1.PodRunning // restarting
		case stopped == succeeded:
			return corev1.PodSucceeded
		case policy == corev1.RestartPolicyNever:
			return corev1.PodFailed
		}
		return corev1.PodRunning // OnFailure: restarting the failed ones
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
