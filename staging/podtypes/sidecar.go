package podtypes

import corev1 "k8s.io/api/core/v1"

// IsSidecar reports whether an init container is a sidecar: one with
// restartPolicy Always, which starts in order with the init containers,
// keeps running beside the app containers and stops after them.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
