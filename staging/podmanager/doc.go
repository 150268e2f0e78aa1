// Package podmanager keeps the agent's index of the pods it should run and
// of the mirror pods the apiserver holds for its static pods.
//
// A Manager indexes regular pods (static and API pods) and mirror pods by
// UID and by full name, answers which mirror belongs to which static pod,
// finds orphaned mirror pods, and translates a mirror pod's UID into the UID
// of the pod the agent actually runs.
//
// It differs from the kubelet's pod manager on purpose:
//
//   - It has no side effects and holds no API client; creating and deleting
//     mirror pods is the caller's business (see the mirror module).
//   - Nothing is cached that can be derived: UID translations are computed
//     from the two full-name indexes, so they never go stale.
//   - Removing a pod removes only its own mappings. When two pods share a
//     full name (an edited static pod and its predecessor, or a mirror that
//     was deleted and re-created), removing one leaves the other reachable.
//
// A Manager is safe for concurrent use. The pods it returns are the objects
// it was given; callers must treat them as read-only.
//
//	m := podmanager.New()
//	m.SetPods(pods)               // a full snapshot: static, API and mirror pods
//	if mirror, ok := m.MirrorPodByPod(static); ok && !podmanager.IsMirrorPodOf(mirror, static) {
//		// the mirror is outdated: recreate it
//	}
package podmanager
