package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The phase under container-level restart policies and rules: a stopped
// container counts as restarting only if its own rules and policy (else
// the pod's policy) restart it after the exit it had.
func TestPodPhaseContainerRestartRules(t *testing.T) {
	policy := func(p corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy { return &p }
	rule42 := []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	exitedWith := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	backingOff := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	for _, tc := range []struct {
		name      string
		pod       corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		init      bool // the container is an init container (the app container then waits)
		status    corev1.ContainerStatus
		want      corev1.PodPhase
	}{
		{"container Never under Always: failed", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyNever), nil, false, exitedWith(1), corev1.PodFailed},
		{"container Never under Always: succeeded", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyNever), nil, false, exitedWith(0), corev1.PodSucceeded},
		{"container Always under Never: restarting", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyAlways), nil, false, exitedWith(1), corev1.PodRunning},
		{"container OnFailure under Never: failed, restarting", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyOnFailure), nil, false, backingOff(1), corev1.PodRunning},
		{"container OnFailure under Never: succeeded", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyOnFailure), nil, false, exitedWith(0), corev1.PodSucceeded},
		{"rule matched: restarting", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever), rule42, false, backingOff(42), corev1.PodRunning},
		{"rule not matched: failed", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever), rule42, false, exitedWith(1), corev1.PodFailed},
		{"pod policy alone: Never", corev1.RestartPolicyNever, nil, nil, false, exitedWith(1), corev1.PodFailed},
		{"pod policy alone: OnFailure", corev1.RestartPolicyOnFailure, nil, nil, false, exitedWith(1), corev1.PodRunning},
		{"init container OnFailure under Never: retried", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyOnFailure), nil, true, backingOff(1), corev1.PodPending},
		{"init container, pod Never: failed", corev1.RestartPolicyNever, nil, nil, true, exitedWith(1), corev1.PodFailed},
		{"init container Never under Always: failed", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyNever), nil, true, exitedWith(1), corev1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := corev1.Container{Name: "main", Image: "busybox", RestartPolicy: tc.container, RestartPolicyRules: tc.rules}
			pod := testPod(tc.pod, nil)
			var inits, apps []corev1.ContainerStatus
			if tc.init {
				pod.Spec.InitContainers = []corev1.Container{c}
				pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "busybox"}}
				inits = []corev1.ContainerStatus{tc.status}
				apps = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
			} else {
				pod.Spec.Containers = []corev1.Container{c}
				apps = []corev1.ContainerStatus{tc.status}
			}
			if got := podPhase(pod, inits, apps, false); got != tc.want {
				t.Errorf("phase %s, want %s", got, tc.want)
			}
		})
	}
}
