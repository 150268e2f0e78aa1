package runtime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerEnv resolves a container's environment: plain values, and
// values from the pod's own fields (downward API fieldRef). Values from
// ConfigMaps, Secrets and resources are not resolved here; a container
// asking for one fails with ErrUnsupported rather than start without it.
// $(VAR) references are passed through unexpanded.
func containerEnv(c *corev1.Container, env podEnv) ([]*runtimeapi.KeyValue, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %q: envFrom: %w", c.Name, ErrUnsupported)
	}
	out := make([]*runtimeapi.KeyValue, 0, len(c.Env))
	for _, e := range c.Env {
		value := e.Value
		if vf := e.ValueFrom; vf != nil {
			if vf.FieldRef == nil {
				return nil, fmt.Errorf("container %q: env %s: only valueFrom.fieldRef is resolved: %w", c.Name, e.Name, ErrUnsupported)
			}
			v, err := fieldValue(vf.FieldRef.FieldPath, env)
			if err != nil {
				return nil, fmt.Errorf("container %q: env %s: %w", c.Name, e.Name, err)
			}
			value = v
		}
		out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(value)})
	}
	return out, nil
}

// fieldValue resolves a downward API field path against the pod.
func fieldValue(path string, env podEnv) (string, error) {
	pod := env.pod
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		if len(env.ips) > 0 {
			return env.ips[0], nil
		}
		return "", nil
	case "status.podIPs":
		return strings.Join(env.ips, ","), nil
	}
	return "", fmt.Errorf("fieldRef %q: %w", path, ErrUnsupported)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}
