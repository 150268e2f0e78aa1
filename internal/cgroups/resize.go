package cgroups

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ResizePod moves the pod's cgroup from the limits of running (the pod as
// its containers run) to those of want around containers, which resizes
// the containers themselves: what grows grows first, so that no container
// gets more than its pod (the kernel refuses a child's CFS quota above its
// parent's), and what shrinks shrinks once the containers are within it.
// An error of containers is returned as it is, after the pod's cgroup was
// given want's limits all the same (a container left as it ran is within
// them or has failed its own update).
func (m *Manager) ResizePod(running, want *corev1.Pod, containers func() error) error {
	from, to := podLimits(running), podLimits(want)
	m.mu.Lock()
	n := m.podName(podtypes.QOSClass(want), want.UID)
	if m.exists(m.flatName(want.UID)) {
		n = m.flatName(want.UID)
	}
	var err error
	if g := grown(from, to); g != (limits{}) {
		// Nothing grows: no write, and no update timed for it.
		err = m.update(n, g)
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	cerr := containers()
	m.mu.Lock()
	defer m.mu.Unlock()
	err = m.update(n, to)
	if class := podtypes.QOSClass(want); class == corev1.PodQOSBurstable {
		m.burstable[want.UID] = podTotal(want, corev1.ResourceCPU, requests).milliValue()
		err = errors.Join(err, m.updateBurstable())
	}
	return errors.Join(cerr, err)
}

// grown are the limits of to that exceed those of from; zero (left as
// they are) for the others. A quota or memory limit that appears where
// there was none is a shrink, from unlimited.
func grown(from, to limits) limits {
	var g limits
	if to.shares > from.shares {
		g.shares = to.shares
	}
	if from.quota > 0 && to.quota > from.quota {
		g.quota = to.quota
	}
	if from.memory > 0 && to.memory > from.memory {
		g.memory = to.memory
	}
	return g
}
