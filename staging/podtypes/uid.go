package podtypes

import "k8s.io/apimachinery/pkg/types"

// ResolvedPodUID is the UID of a pod as the agent runs it: for a static pod
// the UID its source assigned, never the UID of its mirror pod. Workers,
// status and the runtime are keyed by it.
type ResolvedPodUID types.UID

// MirrorPodUID is the UID the apiserver gave a mirror pod. Keeping it a
// distinct type stops it from being used where a ResolvedPodUID is meant.
type MirrorPodUID types.UID
