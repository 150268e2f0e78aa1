package podtypes

import corev1 "k8s.io/api/core/v1"

// The annotation keys are the kubelet's, so that tools that read them
// (kubectl, controllers, NodeRestriction) treat nodeagent's pods alike.
const (
	// ConfigSourceAnnotationKey holds the Source a pod came from.
	ConfigSourceAnnotationKey = "kubernetes.io/config.source"
	// ConfigHashAnnotationKey holds the hash of a static pod's manifest.
	ConfigHashAnnotationKey = "kubernetes.io/config.hash"
	// ConfigFirstSeenAnnotationKey holds when the agent first saw the pod
	// (RFC 3339 with nanoseconds).
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
	// ConfigMirrorAnnotationKey marks a mirror pod; its value is the config
	// hash of the static pod it mirrors.
	ConfigMirrorAnnotationKey = "kubernetes.io/config.mirror"
	// ConfigOriginAnnotationKey holds where a static pod's manifest came
	// from: its file's path, or its URL without credentials. The kubelet
	// has no such key; nodeagent's sources set it so that the origin
	// travels with the pod.
	ConfigOriginAnnotationKey = "nodeagent.io/config.origin"
)

// ConfigOrigin returns the origin a static pod's source recorded, or "".
func ConfigOrigin(pod *corev1.Pod) string {
	return pod.Annotations[ConfigOriginAnnotationKey]
}

// IsMirrorPod reports whether the pod is a mirror pod.
func IsMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}

// ConfigHash returns a static pod's config hash, or "" if it has none.
func ConfigHash(pod *corev1.Pod) string {
	return pod.Annotations[ConfigHashAnnotationKey]
}

// MirrorHash returns the static pod hash a mirror pod carries, and whether
// the pod is a mirror pod at all.
func MirrorHash(pod *corev1.Pod) (string, bool) {
	h, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return h, ok
}
