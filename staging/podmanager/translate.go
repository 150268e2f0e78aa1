package podmanager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// TranslatePodUID maps a mirror pod's UID to the UID of the static pod it
// mirrors. Any other UID, including the empty one and UIDs the manager does
// not know, comes back unchanged, so callers can translate blindly.
func (m *Manager) TranslatePodUID(uid types.UID) podtypes.ResolvedPodUID {
	if uid == "" {
		return ""
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if mirror, ok := m.mirrorByUID[podtypes.MirrorPodUID(uid)]; ok {
		if pod, ok := m.podByFullName(podtypes.PodFullName(mirror)); ok {
			return podtypes.ResolvedPodUID(pod.UID)
		}
	}
	return podtypes.ResolvedPodUID(uid)
}

// UIDTranslations returns the static-pod-to-mirror and mirror-to-static-pod
// UID maps. Every static pod appears in podToMirror; one without a mirror
// maps to "". Only mirrors with a static pod appear in mirrorToPod.
func (m *Manager) UIDTranslations() (podToMirror map[podtypes.ResolvedPodUID]podtypes.MirrorPodUID, mirrorToPod map[podtypes.MirrorPodUID]podtypes.ResolvedPodUID) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	podToMirror = make(map[podtypes.ResolvedPodUID]podtypes.MirrorPodUID)
	mirrorToPod = make(map[podtypes.MirrorPodUID]podtypes.ResolvedPodUID, len(m.mirrorByUID))
	for uid, pod := range m.podByUID {
		if !podtypes.IsStaticPod(pod) {
			continue
		}
		mirrorUID, _ := m.mirrorUIDsByFN.latest(podtypes.PodFullName(pod))
		podToMirror[uid] = mirrorUID
	}
	for mirrorUID, mirror := range m.mirrorByUID {
		if podUID, ok := m.podUIDsByFN.latest(podtypes.PodFullName(mirror)); ok {
			mirrorToPod[mirrorUID] = podUID
		}
	}
	return podToMirror, mirrorToPod
}

// IsMirrorPodOf reports whether mirror is the mirror of this version of pod:
// same name and namespace, and the mirror carries the pod's config hash.
func IsMirrorPodOf(mirror, pod *corev1.Pod) bool {
	if mirror.Name != pod.Name || mirror.Namespace != pod.Namespace {
		return false
	}
	hash, ok := podtypes.MirrorHash(mirror)
	return ok && hash == podtypes.ConfigHash(pod)
}

// IsCurrentMirrorOf reports whether mirror is the mirror of this version of
// pod and is not being deleted: the one that stays, and carries the pod's
// status.
func IsCurrentMirrorOf(mirror, pod *corev1.Pod) bool {
	return mirror.DeletionTimestamp == nil && IsMirrorPodOf(mirror, pod)
}
