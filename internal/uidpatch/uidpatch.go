package uidpatch

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// TwoWay returns the strategic merge patch from old to new, two versions of
// an API object of type T (such as corev1.Node), with uid as the
// precondition metadata.uid.
func TwoWay[T any](old, new *T, uid types.UID) ([]byte, error) {
	var kind T
	oldJSON, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("encoding the %T: %w", kind, err)
	}
	newJSON, err := json.Marshal(new)
	if err != nil {
		return nil, fmt.Errorf("encoding the %T: %w", kind, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, kind)
	if err != nil {
		return nil, fmt.Errorf("computing the %T patch: %w", kind, err)
	}
	return withUID(patch, uid)
}

// withUID adds metadata.uid to a patch: the apiserver refuses the patch
// with a conflict if the object now has another UID.
func withUID(patch []byte, uid types.UID) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("decoding the patch: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["uid"] = string(uid)
	m["metadata"] = meta
	return json.Marshal(m)
}
