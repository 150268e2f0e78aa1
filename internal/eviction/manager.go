package eviction

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Manager watches the signals against the eviction thresholds and, while
// one is met, frees the resource it is about: first what the node itself
// holds (unused images and dead containers, for the disk), then one pod
// at a time, in the kubelet's order, waiting for each to stop before the
// next. It also says which signals are under pressure (Pressure), for the
// node's pressure conditions.
type Manager struct {
	opts     Options
	metrics  *managerMetrics
	notifier *memoryNotifier

	mu sync.Mutex
	// met are the signals met at the last observation, with whether the
	// threshold met is hard; a met signal stays met until its minimum
	// reclaim is available again.
	met map[string]bool
	// firstSeen is when each met signal was first observed met: a soft
	// threshold acts once its grace period has passed since. lastSeen is
	// when each signal was last observed met.
	firstSeen, lastSeen map[string]time.Time
}

// New returns a Manager; it watches once Run is called. It fails if
// opts are not valid (ErrInvalidOptions).
func New(opts Options) (*Manager, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("eviction metrics: %w", err)
	}
	return &Manager{opts: opts, metrics: m, met: map[string]bool{}, firstSeen: map[string]time.Time{}, lastSeen: map[string]time.Time{}}, nil
}

// Pressure returns the signals under pressure, as the kubelet's node
// conditions count them: true for those whose threshold is met now (soft
// ones before their grace period has passed too), false for those met
// within the pressure transition period, so that a node hovering at a
// threshold does not flap, and that a pressure relieved by an eviction
// at once still shows.
func (m *Manager) Pressure() map[string]bool {
	out := map[string]bool{}
	if m == nil {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Clock.Now()
	for signal, at := range m.lastSeen {
		if now.Sub(at) < m.opts.PressureTransition {
			_, met := m.met[signal]
			out[signal] = met
		}
	}
	return out
}

// Run watches until ctx ends: every Interval, and at once when the pods'
// memory crosses a threshold (where the kernel tells: cgroup v1's memory
// thresholds).
func (m *Manager) Run(ctx context.Context) error {
	if m.opts.PodsMemoryDir != "" {
		n, err := newMemoryNotifier(m.opts.PodsMemoryDir, m.opts.Logger)
		if err != nil {
			m.opts.Logger.Info("Memory thresholds are polled: the kernel cannot notify", "cgroup", m.opts.PodsMemoryDir, "reason", err.Error())
		} else {
			m.notifier = n
			defer n.close()
		}
	}
	tick := m.opts.Clock.NewTicker(m.opts.Interval)
	defer tick.Stop()
	var notified <-chan struct{}
	if m.notifier != nil {
		notified = m.notifier.crossed
	}
	for {
		m.synchronize(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
		case <-notified:
			m.metrics.notifications.Inc()
		}
	}
}

// synchronize observes the signals and, if a threshold is met past its
// grace period, reclaims one step of its resource.
func (m *Manager) synchronize(ctx context.Context) {
	ob, err := m.opts.Observe(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.opts.Logger.Error(err, "Eviction: observing the signals")
		}
		return
	}
	now := m.opts.Clock.Now()
	act := m.evaluate(ob, now)
	m.arm(ob)
	p := &pass{pods: m.opts.Pods(), usage: m.opts.Usage}
	if m.localStorage(ctx, p) || len(act) == 0 {
		return
	}
	signal := act[0]
	res := resourceOf(signal)
	m.opts.Logger.Info("Eviction threshold met: reclaiming", "signal", signal, "resource", res, "available", ob.Signals[signal].Available)
	if res != corev1.ResourceMemory && res != resourcePIDs && m.opts.ReclaimDisk != nil {
		if err := m.opts.ReclaimDisk(ctx); err != nil {
			m.opts.Logger.Error(err, "Eviction: reclaiming the node's own disk use")
		}
		again, err := m.opts.Observe(ctx)
		if err == nil && !m.stillMet(signal, again) {
			m.opts.Logger.Info("Eviction: the node's own reclaim was enough; no pod is evicted", "signal", signal)
			return
		}
		if err == nil {
			ob = again
		}
	}
	m.evictOne(ctx, p, signal, ob)
}

// pass is one synchronize's view of the pods: listed once, measured at
// most once, and only if a limit or a threshold asks.
type pass struct {
	pods     []*corev1.Pod
	usage    func(context.Context, []*corev1.Pod) (map[types.UID]PodUsage, error)
	done     bool
	measured map[types.UID]PodUsage
	err      error
}

func (p *pass) measure(ctx context.Context) (map[types.UID]PodUsage, error) {
	if !p.done {
		p.measured, p.err = p.usage(ctx, p.pods)
		p.done = true
	}
	return p.measured, p.err
}

// evaluate updates which signals are met and returns those to act on now
// (hard ones, and soft ones past their grace period), memory first.
func (m *Manager) evaluate(ob Observation, now time.Time) []string {
	met := map[string]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for signal, r := range ob.Signals {
		switch {
		case m.opts.Hard.Crossed(signal, r):
			met[signal] = true
		case m.opts.Soft.Crossed(signal, r):
			met[signal] = false
		default:
			if hard, was := m.met[signal]; was && r.Available < m.resolvedAt(signal, hard, r.Capacity) {
				met[signal] = hard // not yet its minimum reclaim above the bound
			}
		}
	}
	for signal := range m.firstSeen {
		if _, ok := met[signal]; !ok {
			delete(m.firstSeen, signal)
		}
	}
	var act []string
	for signal, hard := range met {
		if _, ok := m.firstSeen[signal]; !ok {
			m.firstSeen[signal] = now
		}
		m.lastSeen[signal] = now
		if hard || now.Sub(m.firstSeen[signal]) >= m.opts.SoftGracePeriods[thresholdOf(signal)] {
			act = append(act, signal)
		}
	}
	m.met = met
	slices.SortFunc(act, func(a, b string) int { return signalOrder(a) - signalOrder(b) })
	return act
}

// resolvedAt is what must be available again for a met signal to be
// resolved: its bound plus its minimum reclaim.
func (m *Manager) resolvedAt(signal string, hard bool, capacity int64) int64 {
	ts := m.opts.Soft
	if hard {
		ts = m.opts.Hard
	}
	bound := ts.Bound(signal, capacity)
	if t, ok := m.opts.MinimumReclaim[thresholdOf(signal)]; ok {
		bound += t.of(capacity)
	}
	return bound
}

// stillMet tells whether signal is still short of being resolved in ob.
func (m *Manager) stillMet(signal string, ob Observation) bool {
	r, ok := ob.Signals[signal]
	if !ok {
		return false
	}
	m.mu.Lock()
	hard := m.met[signal]
	m.mu.Unlock()
	return r.Available < m.resolvedAt(signal, hard, r.Capacity)
}

// evictOne evicts the first pod in the kubelet's order for the signal's
// resource that may be evicted, and waits for it to stop.
func (m *Manager) evictOne(ctx context.Context, p *pass, signal string, ob Observation) {
	if len(p.pods) == 0 {
		m.opts.Logger.Info("Eviction: a threshold is met but no pod runs to evict", "signal", signal)
		return
	}
	usage, err := p.measure(ctx)
	if err != nil {
		m.opts.Logger.Error(err, "Eviction: measuring the pods")
		return
	}
	res := resourceOf(signal)
	pods := slices.Clone(p.pods)
	rank(pods, res, usage)
	m.mu.Lock()
	hard := m.met[signal]
	m.mu.Unlock()
	ts := m.opts.Soft
	if hard {
		ts = m.opts.Hard
	}
	threshold, r := ts[thresholdOf(signal)], ob.Signals[signal]
	for _, pod := range pods {
		if podtypes.IsCritical(pod) {
			continue // as under the kubelet: static, mirror and system-critical pods stay
		}
		grace := int64(immediateGracePeriod)
		if !hard {
			grace = podtypes.GracePeriod(pod)
			if m.opts.MaxPodGracePeriod >= 0 {
				grace = min(grace, m.opts.MaxPodGracePeriod)
			}
		}
		msg := message(res, pod, usage[pod.UID], threshold, r)
		if !m.opts.Evict(pod, msg, grace) {
			continue
		}
		m.metrics.evicted(signal)
		m.opts.Logger.Info("Evicted a pod", "pod", podtypes.PodFullName(pod), "podUID", pod.UID, "signal", signal, "gracePeriod", grace, "message", msg)
		m.waitReclaimed(ctx, pod.UID)
		return
	}
	m.opts.Logger.Info("Eviction: no pod could be evicted", "signal", signal, "candidates", len(pods))
}

// waitReclaimed waits until what the evicted pod held is released, at
// most cleanupTimeout, so that the next observation shows whether another
// pod must go.
func (m *Manager) waitReclaimed(ctx context.Context, uid types.UID) {
	timeout := m.opts.Clock.NewTimer(cleanupTimeout)
	defer timeout.Stop()
	poll := m.opts.Clock.NewTicker(cleanupPoll)
	defer poll.Stop()
	for !m.opts.Reclaimed(uid) {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C():
			m.opts.Logger.Info("Eviction: what the evicted pod held is not released yet; going on", "podUID", uid, "after", cleanupTimeout)
			return
		case <-poll.C():
		}
	}
}

// How an eviction is carried out: a hard threshold stops the pod at once
// (the kubelet's one second), and the manager waits up to cleanupTimeout
// for it to stop, looking every cleanupPoll.
const (
	immediateGracePeriod = 1
	cleanupTimeout       = 30 * time.Second
	cleanupPoll          = 100 * time.Millisecond
)

// arm tells the kernel the pods' memory usage at which the
// allocatableMemory.available threshold is crossed: the allocatable
// memory less the higher of the memory thresholds, plus the inactive file
// pages the working set leaves out.
func (m *Manager) arm(ob Observation) {
	if m.notifier == nil {
		return
	}
	r, ok := ob.Signals[SignalAllocatableMemoryAvailable]
	if !ok {
		return
	}
	bound := max(m.opts.Hard.Bound(SignalAllocatableMemoryAvailable, r.Capacity), m.opts.Soft.Bound(SignalAllocatableMemoryAvailable, r.Capacity))
	if bound == 0 {
		return
	}
	inactive, err := memoryStat(m.opts.PodsMemoryDir, "total_inactive_file")
	if err == nil {
		err = m.notifier.set(r.Capacity - bound + inactive)
	}
	if err != nil {
		m.opts.Logger.V(1).Info("Eviction: the memory threshold notification could not be set; polling", "err", err.Error())
	}
}
