package runtime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// containerEnv resolves a container's environment: plain values, and
// values from the pod's own fields (downward API fieldRef). Values from
// resources are not resolved, nor are ConfigMaps and Secrets of API pods
// (yet): a container asking for one fails with ErrUnsupported rather than
// start without it.
//
// A static pod cannot read API objects: it must run while the apiserver is
// away, and the node may read only objects of pods bound to it through the
// apiserver. Its manifest may still name a Secret or ConfigMap if the
// reference is optional (staging/config refuses required ones), and an
// optional reference resolves as absent: the variable is left unset and an
// envFrom source adds nothing. Such a pod cannot be mirrored.
//
// $(VAR) references are passed through unexpanded.
func containerEnv(c *corev1.Container, env podEnv) ([]*runtimeapi.KeyValue, error) {
	static := podtypes.IsStaticPod(env.pod)
	for i, e := range c.EnvFrom {
		if !static || !optionalEnvFrom(&e) {
			return nil, fmt.Errorf("container %q: envFrom[%d]: %w", c.Name, i, ErrUnsupported)
		}
	}
	out := make([]*runtimeapi.KeyValue, 0, len(c.Env))
	for _, e := range c.Env {
		value := e.Value
		if vf := e.ValueFrom; vf != nil {
			if static && optionalKeyRef(vf) {
				continue
			}
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

// optionalKeyRef reports whether a variable's only source is an optional
// Secret or ConfigMap key.
func optionalKeyRef(vf *corev1.EnvVarSource) bool {
	if vf.FieldRef != nil || vf.ResourceFieldRef != nil || vf.FileKeyRef != nil {
		return false
	}
	switch {
	case vf.SecretKeyRef != nil && vf.ConfigMapKeyRef != nil:
		return false
	case vf.SecretKeyRef != nil:
		return isTrue(vf.SecretKeyRef.Optional)
	case vf.ConfigMapKeyRef != nil:
		return isTrue(vf.ConfigMapKeyRef.Optional)
	}
	return false
}

// optionalEnvFrom reports whether an envFrom source is one optional Secret
// or ConfigMap.
func optionalEnvFrom(e *corev1.EnvFromSource) bool {
	switch {
	case e.SecretRef != nil && e.ConfigMapRef != nil:
		return false
	case e.SecretRef != nil:
		return isTrue(e.SecretRef.Optional)
	case e.ConfigMapRef != nil:
		return isTrue(e.ConfigMapRef.Optional)
	}
	return false
}

func isTrue(b *bool) bool { return b != nil && *b }

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
