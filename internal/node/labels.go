package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// ValidateLabels checks --node-labels: well-formed, and none that
// NodeRestriction forbids a node to set on itself (a key under
// kubernetes.io or k8s.io that is not one of the labels a kubelet may
// set), since the apiserver would refuse the whole Node for it.
func ValidateLabels(labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return fmt.Errorf("--node-labels: key %q: %s", k, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			return fmt.Errorf("--node-labels: %s=%q: %s", k, labels[k], strings.Join(msgs, "; "))
		}
		if reservedNamespace(k) && !kubeletapis.IsKubeletLabel(k) {
			return fmt.Errorf("--node-labels: %q is under kubernetes.io or k8s.io and is not one a node may set on itself (NodeRestriction refuses it); the ones it may: %s, or any key under %s",
				k, strings.Join(kubeletapis.KubeletLabels(), ", "), strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "))
		}
	}
	return nil
}

// reservedNamespace tells whether a label key's prefix is kubernetes.io
// or k8s.io, or a subdomain of either.
func reservedNamespace(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return true
		}
	}
	return false
}

// ParseTaints reads --register-with-taints items, each key[=value]:Effect.
func ParseTaints(items []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	seen := map[string]bool{}
	for _, item := range items {
		kv, effect, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("--register-with-taints %q: want key[=value]:Effect", item)
		}
		key, value, _ := strings.Cut(kv, "=")
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, fmt.Errorf("--register-with-taints %q: key: %s", item, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			return nil, fmt.Errorf("--register-with-taints %q: value: %s", item, strings.Join(msgs, "; "))
		}
		e := corev1.TaintEffect(effect)
		if e != corev1.TaintEffectNoSchedule && e != corev1.TaintEffectPreferNoSchedule && e != corev1.TaintEffectNoExecute {
			return nil, fmt.Errorf("--register-with-taints %q: effect %q is none of NoSchedule, PreferNoSchedule, NoExecute", item, effect)
		}
		if seen[key+":"+effect] {
			return nil, fmt.Errorf("--register-with-taints %q: %s:%s is given twice", item, key, effect)
		}
		seen[key+":"+effect] = true
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: e})
	}
	return out, nil
}
