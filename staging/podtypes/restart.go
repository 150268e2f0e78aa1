package podtypes

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// RestartsAfterExit reports whether a container of spec that exited with
// exitCode runs again, as the kubelet decides it with the
// ContainerRestartRules feature: the container's restartPolicyRules first,
// in order, the first whose exit codes match deciding if its action is
// Restart (another action, such as RestartAllContainers, whose feature is
// off by default, falls through); then the container's own restartPolicy;
// then the pod's. A sidecar's restartPolicy is Always.
func RestartsAfterExit(spec *corev1.PodSpec, c *corev1.Container, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok && rule.Action == corev1.ContainerRestartRuleActionRestart {
			return true
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true // Always, the default
}

// RunsOnce reports whether a container of spec that succeeded (exit code
// 0) is done for good, though others of the pod may restart: its own
// restartPolicy, else the pod's, is OnFailure.
func RunsOnce(spec *corev1.PodSpec, c *corev1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy == corev1.ContainerRestartPolicyOnFailure
	}
	return spec.RestartPolicy == corev1.RestartPolicyOnFailure
}

// matchingRestartRule returns the first of the container's restart rules
// whose exit codes match exitCode.
func matchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		in := slices.Contains(r.ExitCodes.Values, exitCode)
		switch r.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return r, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return r, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}
