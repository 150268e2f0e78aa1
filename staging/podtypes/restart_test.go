package podtypes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRestartsAfterExit(t *testing.T) {
	policy := func(p corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy { return &p }
	rule := func(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
		return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
	}
	const (
		restart = corev1.ContainerRestartRuleActionRestart
		in      = corev1.ContainerRestartRuleOnExitCodesOpIn
		notIn   = corev1.ContainerRestartRuleOnExitCodesOpNotIn
	)
	tests := []struct {
		name      string
		pod       corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		exit      int32
		want      bool
	}{
		{"pod Always", corev1.RestartPolicyAlways, nil, nil, 0, true},
		{"pod OnFailure, failed", corev1.RestartPolicyOnFailure, nil, nil, 1, true},
		{"pod OnFailure, succeeded", corev1.RestartPolicyOnFailure, nil, nil, 0, false},
		{"pod Never", corev1.RestartPolicyNever, nil, nil, 1, false},
		{"container Never over pod Always", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyNever), nil, 1, false},
		{"container Always over pod Never", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyAlways), nil, 0, true},
		{"container OnFailure over pod Never, failed", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyOnFailure), nil, 1, true},
		{"container OnFailure over pod Always, succeeded", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyOnFailure), nil, 0, false},
		{"rule In matches", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(restart, in, 42)}, 42, true},
		{"rule In does not match: the container's policy", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(restart, in, 42)}, 1, false},
		{"rule NotIn matches", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(restart, notIn, 0, 2)}, 1, true},
		{"rule NotIn does not match", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(restart, notIn, 0, 2)}, 2, false},
		{"the first matching rule decides", corev1.RestartPolicyNever, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(restart, in, 3), rule(restart, notIn, 7)}, 5, true},
		{"another action falls through to the container's policy", corev1.RestartPolicyAlways, policy(corev1.ContainerRestartPolicyNever),
			[]corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleActionRestartAllContainers, in, 42)}, 42, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{RestartPolicy: tc.pod}
			c := &corev1.Container{Name: "main", RestartPolicy: tc.container, RestartPolicyRules: tc.rules}
			if got := RestartsAfterExit(spec, c, tc.exit); got != tc.want {
				t.Errorf("RestartsAfterExit(exit %d) = %v, want %v", tc.exit, got, tc.want)
			}
		})
	}
}

func TestRunsOnce(t *testing.T) {
	onFailure, always := corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		name      string
		pod       corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		want      bool
	}{
		{"pod OnFailure", corev1.RestartPolicyOnFailure, nil, true},
		{"pod Always", corev1.RestartPolicyAlways, nil, false},
		{"container OnFailure", corev1.RestartPolicyAlways, &onFailure, true},
		{"container Always over pod OnFailure", corev1.RestartPolicyOnFailure, &always, false},
	} {
		if got := RunsOnce(&corev1.PodSpec{RestartPolicy: tc.pod}, &corev1.Container{RestartPolicy: tc.container}); got != tc.want {
			t.Errorf("%s: RunsOnce = %v, want %v", tc.name, got, tc.want)
		}
	}
}
