package podmanager

import (
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Manager indexes the pods the agent knows. The zero value is not usable;
// call New.
type Manager struct {
	mu sync.RWMutex

	// Regular pods: static pods (by the UID their source gave them) and
	// pods from the apiserver.
	podByUID    map[podtypes.ResolvedPodUID]*corev1.Pod
	podUIDsByFN nameIndex[podtypes.ResolvedPodUID]

	// Mirror pods, by the UID the apiserver gave them.
	mirrorByUID    map[podtypes.MirrorPodUID]*corev1.Pod
	mirrorUIDsByFN nameIndex[podtypes.MirrorPodUID]
}

// New returns an empty Manager.
func New() *Manager {
	m := &Manager{}
	m.reset(0)
	return m
}

func (m *Manager) reset(size int) {
	m.podByUID = make(map[podtypes.ResolvedPodUID]*corev1.Pod, size)
	m.podUIDsByFN = make(nameIndex[podtypes.ResolvedPodUID], size)
	m.mirrorByUID = make(map[podtypes.MirrorPodUID]*corev1.Pod)
	m.mirrorUIDsByFN = make(nameIndex[podtypes.MirrorPodUID])
}

// SetPods replaces everything the manager knows with pods, which may mix
// regular and mirror pods.
func (m *Manager) SetPods(pods []*corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reset(len(pods))
	for _, pod := range pods {
		m.put(pod)
	}
}

// AddPod adds a regular or mirror pod. Adding a pod whose UID is known
// replaces it, exactly like UpdatePod.
func (m *Manager) AddPod(pod *corev1.Pod) { m.UpdatePod(pod) }

// UpdatePod stores the new version of a pod, keyed by its UID. The pod
// becomes the one returned by a lookup of its full name.
func (m *Manager) UpdatePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(pod)
}

// RemovePod forgets a pod by its UID. Removing a mirror pod removes only the
// mirror's own mappings; the static pod it mirrored stays.
func (m *Manager) RemovePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if podtypes.IsMirrorPod(pod) {
		uid := podtypes.MirrorPodUID(pod.UID)
		if old, ok := m.mirrorByUID[uid]; ok {
			delete(m.mirrorByUID, uid)
			m.mirrorUIDsByFN.drop(podtypes.PodFullName(old), uid)
		}
		return
	}
	uid := podtypes.ResolvedPodUID(pod.UID)
	if old, ok := m.podByUID[uid]; ok {
		delete(m.podByUID, uid)
		m.podUIDsByFN.drop(podtypes.PodFullName(old), uid)
	}
}

// put indexes pod; the caller holds the write lock. The full name is taken
// from the stored pod when dropping, so an update that somehow renames a pod
// cannot leave a stale name behind.
func (m *Manager) put(pod *corev1.Pod) {
	fullName := podtypes.PodFullName(pod)
	if podtypes.IsMirrorPod(pod) {
		uid := podtypes.MirrorPodUID(pod.UID)
		if old, ok := m.mirrorByUID[uid]; ok && !sameName(old, pod) {
			m.mirrorUIDsByFN.drop(podtypes.PodFullName(old), uid)
		}
		m.mirrorByUID[uid] = pod
		m.mirrorUIDsByFN.put(fullName, uid)
		return
	}
	uid := podtypes.ResolvedPodUID(pod.UID)
	if old, ok := m.podByUID[uid]; ok && !sameName(old, pod) {
		m.podUIDsByFN.drop(podtypes.PodFullName(old), uid)
	}
	m.podByUID[uid] = pod
	m.podUIDsByFN.put(fullName, uid)
}

func sameName(a, b *corev1.Pod) bool {
	return a.Name == b.Name && a.Namespace == b.Namespace
}

// podByFullName and mirrorByFullName need the read lock held.
func (m *Manager) podByFullName(fullName string) (*corev1.Pod, bool) {
	uid, ok := m.podUIDsByFN.latest(fullName)
	if !ok {
		return nil, false
	}
	return m.podByUID[uid], true
}

func (m *Manager) mirrorByFullName(fullName string) (*corev1.Pod, bool) {
	uid, ok := m.mirrorUIDsByFN.latest(fullName)
	if !ok {
		return nil, false
	}
	return m.mirrorByUID[uid], true
}
