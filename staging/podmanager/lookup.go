package podmanager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// PodByUID returns the regular pod with the given UID. A mirror pod's UID
// finds nothing here; translate it first with TranslatePodUID.
func (m *Manager) PodByUID(uid types.UID) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	pod, ok := m.podByUID[podtypes.ResolvedPodUID(uid)]
	return pod, ok
}

// PodByFullName returns the regular pod with the given full name; if two
// share it, the one added or updated last.
func (m *Manager) PodByFullName(fullName string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.podByFullName(fullName)
}

// PodByName returns the regular pod with the given namespace and name.
func (m *Manager) PodByName(namespace, name string) (*corev1.Pod, bool) {
	return m.PodByFullName(podtypes.FullName(name, namespace))
}

// MirrorPodByPod returns the mirror pod that carries pod's full name.
// Whether it mirrors this version of the pod is IsMirrorPodOf's question.
func (m *Manager) MirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mirrorByFullName(podtypes.PodFullName(pod))
}

// MirrorPodByFullName returns the mirror pod with the given full name; if
// two share it, the one added or updated last.
func (m *Manager) MirrorPodByFullName(fullName string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mirrorByFullName(fullName)
}

// PodByMirrorPod returns the static pod that carries the mirror's full name.
func (m *Manager) PodByMirrorPod(mirror *corev1.Pod) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.podByFullName(podtypes.PodFullName(mirror))
}

// Pods returns every regular pod.
func (m *Manager) Pods() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return values(m.podByUID)
}

// MirrorPods returns every mirror pod.
func (m *Manager) MirrorPods() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return values(m.mirrorByUID)
}

// PodsAndMirrorPods returns the regular and the mirror pods from one
// consistent view.
func (m *Manager) PodsAndMirrorPods() (pods, mirrorPods []*corev1.Pod) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return values(m.podByUID), values(m.mirrorByUID)
}

// OrphanedMirrorPodFullNames returns the full names of mirror pods for which
// no regular pod of that full name is known: mirrors to delete.
func (m *Manager) OrphanedMirrorPodFullNames() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var orphans []string
	for fullName := range m.mirrorUIDsByFN {
		if _, ok := m.podUIDsByFN.latest(fullName); !ok {
			orphans = append(orphans, fullName)
		}
	}
	return orphans
}

func values[K comparable](byUID map[K]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(byUID))
	for _, pod := range byUID {
		out = append(out, pod)
	}
	return out
}
