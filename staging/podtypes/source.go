package podtypes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Source names where a pod came from. Its string form is what the config
// source annotation holds.
type Source string

const (
	// FileSource is a directory (or single file) of manifests on the node.
	FileSource Source = "file"
	// HTTPSource is a URL that serves manifests.
	HTTPSource Source = "http"
	// APIServerSource is the kube-apiserver.
	APIServerSource Source = "api"
	// AllSource stands for every source at once, for example in a readiness
	// query or a snapshot update that merges all sources.
	AllSource Source = "*"
)

// Sources lists the concrete sources, in the order the agent prefers them.
func Sources() []Source {
	return []Source{FileSource, HTTPSource, APIServerSource}
}

// Valid reports whether s names a concrete source (not AllSource).
func (s Source) Valid() bool {
	switch s {
	case FileSource, HTTPSource, APIServerSource:
		return true
	}
	return false
}

// PodSource returns the source recorded in the pod's config source
// annotation. A pod without the annotation, or with an unknown value, is an
// error: every pod the agent handles must say where it came from.
func PodSource(pod *corev1.Pod) (Source, error) {
	v, ok := pod.Annotations[ConfigSourceAnnotationKey]
	if !ok {
		return "", fmt.Errorf("pod %q: annotation %s is missing", PodFullName(pod), ConfigSourceAnnotationKey)
	}
	s := Source(v)
	if !s.Valid() {
		return "", fmt.Errorf("pod %q: annotation %s=%q names no known source", PodFullName(pod), ConfigSourceAnnotationKey, v)
	}
	return s, nil
}

// IsStaticPod reports whether the pod came from a node-local source (file or
// HTTP). A pod whose source is unknown is not static.
func IsStaticPod(pod *corev1.Pod) bool {
	s, err := PodSource(pod)
	return err == nil && s != APIServerSource
}
