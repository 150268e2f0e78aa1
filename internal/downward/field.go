package downward

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// IPs are the addresses a fieldRef may name that the pod object may not
// hold yet: the sandbox's and the node's, primary first.
type IPs struct {
	Pod  []string
	Host []string
}

// FieldValue resolves a fieldRef path against the pod: metadata.name,
// namespace, uid, labels, annotations (whole or one key, as
// metadata.labels['k']), spec.nodeName, spec.serviceAccountName,
// status.podIP(s) and status.hostIP(s). A label or annotation that is not
// set is "".
func FieldValue(pod *corev1.Pod, path string, ips IPs) (string, error) {
	if v, ok := metadataValue(pod, path); ok {
		return v, nil
	}
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(ips.Pod), nil
	case "status.podIPs":
		return strings.Join(ips.Pod, ","), nil
	case "status.hostIP":
		return first(ips.Host), nil
	case "status.hostIPs":
		return strings.Join(ips.Host, ","), nil
	}
	return "", fmt.Errorf("fieldRef %q: %w", path, ErrUnsupported)
}

// VolumeFieldValue resolves a fieldRef of a downwardAPI volume item, which
// may name only the pod's metadata: a file is written once per change of
// the pod object, and the sandbox's addresses are not part of it.
func VolumeFieldValue(pod *corev1.Pod, path string) (string, error) {
	if v, ok := metadataValue(pod, path); ok {
		return v, nil
	}
	return "", fmt.Errorf("fieldRef %q: a volume may name only metadata.name, namespace, uid, labels or annotations: %w", path, ErrUnsupported)
}

func metadataValue(pod *corev1.Pod, path string) (string, bool) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], true
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], true
	}
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	case "metadata.labels":
		return formatMap(pod.Labels), true
	case "metadata.annotations":
		return formatMap(pod.Annotations), true
	}
	return "", false
}

// formatMap writes a label or annotation map as the kubelet does: one
// key="value" line per key, sorted, the value Go-quoted so that a newline
// in it cannot forge a line; no newline after the last.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
