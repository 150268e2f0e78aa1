package mirror

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// StaticPodHash returns the config hash of a static pod: the value its
// mirror pod must carry.
func StaticPodHash(pod *corev1.Pod) string {
	return podtypes.ConfigHash(pod)
}

// MirrorPodHash returns the static pod hash a mirror pod carries, and false
// if the pod is not a mirror pod.
func MirrorPodHash(pod *corev1.Pod) (string, bool) {
	return podtypes.MirrorHash(pod)
}
