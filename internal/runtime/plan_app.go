package runtime

import (
	corev1 "k8s.io/api/core/v1"
)

// planApp plans the app containers of an initialized pod. A running
// container is kept unless its spec changed; a stopped one restarts as its
// restart rules and policy, else the pod's policy, say. When nothing runs and nothing is to start, the pod
// is done and its sandbox is stopped.
func planApp(p *plan, pod *corev1.Pod, status *PodStatus) {
	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		// The newest instance in any sandbox: its restart count and exit
		// continue across a sandbox change.
		st := status.LatestContainer(c.Name)
		switch {
		case st != nil && st.State == ContainerStateRunning && specChanged(c, st):
			// A changed spec restarts the container whatever the policy.
			p.Kill = append(p.Kill, killStep{ID: st.ID, Name: c.Name, Reason: "spec changed", PreStop: true})
			p.Start = append(p.Start, startStep{Index: i, Name: c.Name, Reason: "spec changed", Previous: st})
		case st != nil && st.State == ContainerStateRunning:
			if !p.planResize(c, i, st) {
				keep++
			}
		case shouldRestart(pod, c, st):
			p.killIfUnknown(st)
			p.Start = append(p.Start, startStep{Index: i, Name: c.Name, Reason: restartReason(st), Previous: st})
		}
	}
	if keep > 0 || hasAppStart(p.Start) {
		return
	}
	// Sidecars do not keep a pod alive.
	p.KillPod = true
	*p = finished(*p, false, "every container terminated and none restarts")
	p.Kill = nil
}

func hasAppStart(steps []startStep) bool {
	for _, s := range steps {
		if !s.Init {
			return true
		}
	}
	return false
}
