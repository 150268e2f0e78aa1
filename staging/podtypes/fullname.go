package podtypes

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// fullNameSeparator joins name and namespace. Neither may contain it: both
// are DNS labels or subdomains, which allow no underscore.
const fullNameSeparator = "_"

// FullName returns the node-unique name of a pod: "<name>_<namespace>".
func FullName(name, namespace string) string {
	return name + fullNameSeparator + namespace
}

// PodFullName returns FullName(pod.Name, pod.Namespace).
func PodFullName(pod *corev1.Pod) string {
	return FullName(pod.Name, pod.Namespace)
}

// ParseFullName splits a full name into name and namespace. It fails unless
// the input holds exactly one separator with a non-empty part on each side.
func ParseFullName(fullName string) (name, namespace string, err error) {
	parts := strings.Split(fullName, fullNameSeparator)
	switch {
	case len(parts) != 2:
		return "", "", fmt.Errorf("pod full name %q: want <name>%s<namespace> with exactly one %q, found %d",
			fullName, fullNameSeparator, fullNameSeparator, len(parts)-1)
	case parts[0] == "":
		return "", "", fmt.Errorf("pod full name %q: name is empty", fullName)
	case parts[1] == "":
		return "", "", fmt.Errorf("pod full name %q: namespace is empty", fullName)
	}
	return parts[0], parts[1], nil
}
