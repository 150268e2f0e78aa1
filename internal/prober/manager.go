package prober

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// updatesBuffer lets workers hand over a burst of changes (many pods
// turning ready together) while the sync loop is busy.
const updatesBuffer = 64

// Options configure a Manager. Exec is required.
type Options struct {
	Exec Execer
	// Registry receives prober_probe_total and
	// prober_probe_duration_seconds; nil registers none.
	Registry metrics.KubeRegistry
	// Steps, if not nil, is told to forget the pods Forget drops.
	Steps  *Steps
	Logger logr.Logger
	Clock  clock.WithTicker
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid prober options")

// Manager owns the probe workers and their results. Sync, StopPod and
// Forget may be called from any goroutine; the workers start once Run
// has been called, and end with it.
type Manager struct {
	exec    Execer
	clock   clock.WithTicker
	log     logr.Logger
	metrics *probeMetrics
	steps   *Steps
	updates chan Update

	mu sync.Mutex
	// ctx is Run's: nil before Run, ended after it.
	ctx     context.Context
	wg      sync.WaitGroup
	workers map[types.UID]map[workerKey]*worker
	podIPs  map[types.UID]string
	// results hold each probed instance's results; kills, by pod and
	// container, the two newest instances killed and why: a status shows
	// the current instance and the one before.
	results map[resultKey]Result
	kills   map[types.UID]map[string][]Kill
	// series are the metric series of each pod's probes, dropped by Forget.
	series map[types.UID]map[series]bool
}

type workerKey struct {
	container string
	kind      Kind
}

type resultKey struct {
	containerID string
	kind        Kind
}

// New returns a Manager; workers run once Run is called.
func New(opts Options) (*Manager, error) {
	if opts.Exec == nil {
		return nil, fmt.Errorf("%w: Exec is required", ErrInvalidOptions)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	pm, err := newProbeMetrics(opts.Registry)
	if err != nil {
		return nil, err
	}
	return &Manager{
		exec: opts.Exec, clock: opts.Clock, log: opts.Logger.WithName("prober"), metrics: pm, steps: opts.Steps,
		updates: make(chan Update, updatesBuffer),
		workers: map[types.UID]map[workerKey]*worker{}, podIPs: map[types.UID]string{},
		results: map[resultKey]Result{}, kills: map[types.UID]map[string][]Kill{}, series: map[types.UID]map[series]bool{},
	}, nil
}

// Updates delivers every change of a result.
func (m *Manager) Updates() <-chan Update { return m.updates }

// Run lets workers run until ctx ends, then ends them all and returns once
// they have ended.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	m.ctx = ctx
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	for uid := range m.workers {
		m.stopLocked(uid, nil)
	}
	m.mu.Unlock()
	m.wg.Wait()
	return nil
}

// Sync starts a worker for each probe of each running container of pod
// (app containers and sidecars) that has none for its current instance,
// and ends the workers of instances that no longer run. rs is the pod's
// newest runtime status.
func (m *Manager) Sync(pod *corev1.Pod, rs *runtime.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil || m.ctx.Err() != nil {
		return
	}
	if rs != nil && len(rs.IPs) > 0 {
		m.podIPs[pod.UID] = rs.IPs[0]
	}
	want := map[workerKey]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			st := rs.LatestContainer(c.Name)
			if st == nil || st.State != runtime.ContainerStateRunning {
				continue
			}
			for kind, p := range [...]*corev1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe} {
				kind := Kind(kind)
				if p == nil {
					continue
				}
				key := workerKey{container: c.Name, kind: kind}
				want[key] = true
				if w := m.workers[pod.UID][key]; w != nil && w.target.containerID == st.ID {
					continue
				}
				m.startLocked(pod, c, st, kind, p)
			}
		}
	}
	m.stopLocked(pod.UID, want)
}

// StopPod ends the pod's workers; their results stay for its final
// status. Forget drops those too.
func (m *Manager) StopPod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopLocked(uid, nil)
}

// Forget ends the pod's workers and drops everything known of it.
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopLocked(uid, nil)
	delete(m.kills, uid)
	delete(m.podIPs, uid)
	for s := range m.series[uid] {
		m.metrics.forget(s)
	}
	delete(m.series, uid)
	m.steps.Forget(uid)
}

// stopLocked ends the pod's workers but those keep names, and drops their
// results: the instance they probed is gone or no longer probed.
func (m *Manager) stopLocked(uid types.UID, keep map[workerKey]bool) {
	for key, w := range m.workers[uid] {
		if keep[key] {
			continue
		}
		w.cancel()
		delete(m.results, resultKey{containerID: w.target.containerID, kind: key.kind})
		delete(m.workers[uid], key)
	}
	if len(m.workers[uid]) == 0 {
		delete(m.workers, uid)
	}
}

func (m *Manager) startLocked(pod *corev1.Pod, c *corev1.Container, st *runtime.ContainerStatus, kind Kind, p *corev1.Probe) {
	if old := m.workers[pod.UID][workerKey{container: c.Name, kind: kind}]; old != nil {
		old.cancel()
		delete(m.results, resultKey{containerID: old.target.containerID, kind: kind})
	}
	ctx, cancel := context.WithCancel(m.ctx)
	w := &worker{
		m: m, uid: pod.UID, pod: pod.Name, namespace: pod.Namespace, kind: kind, spec: p.DeepCopy(),
		target: target{
			container: c.Name, containerID: st.ID, ports: c.Ports, hostNetwork: pod.Spec.HostNetwork,
		},
		hasStartup: c.StartupProbe != nil, startedAt: st.StartedAt,
		grace: graceFor(pod, p), cancel: cancel, wake: make(chan struct{}, 1),
	}
	if m.workers[pod.UID] == nil {
		m.workers[pod.UID] = map[workerKey]*worker{}
	}
	m.workers[pod.UID][workerKey{container: c.Name, kind: kind}] = w
	if kind == Liveness {
		// Alive until proven otherwise, as in the kubelet; readiness and
		// startup start unproven (no result).
		m.results[resultKey{containerID: st.ID, kind: kind}] = Success
	}
	if m.series[pod.UID] == nil {
		m.series[pod.UID] = map[series]bool{}
	}
	m.series[pod.UID][seriesOf(w)] = true
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		w.run(ctx)
	}()
}

// graceFor is the grace period of a kill for a failed probe: the probe's
// own, else the pod's (podtypes.GracePeriod). Probes run only for pods
// that are not being deleted, so the pod's is its spec's or the default.
func graceFor(pod *corev1.Pod, p *corev1.Probe) int64 {
	if p.TerminationGracePeriodSeconds != nil {
		return max(*p.TerminationGracePeriodSeconds, 0)
	}
	return podtypes.GracePeriod(pod)
}

// Started reports whether the instance's startup probe has succeeded.
func (m *Manager) Started(containerID string) bool {
	return m.result(containerID, Startup) == Success
}

// Ready reports whether the instance's readiness probe succeeded last.
func (m *Manager) Ready(containerID string) bool {
	return m.result(containerID, Readiness) == Success
}

// KillReason says why the instance was killed for a probe, or "".
func (m *Manager) KillReason(containerID string) string {
	if containerID == "" {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, byName := range m.kills {
		for _, ks := range byName {
			for _, k := range ks {
				if k.ContainerID == containerID {
					return k.Reason
				}
			}
		}
	}
	return ""
}

// Unhealthy lists the pod's running instances whose liveness or startup
// probe has failed: the agent is to kill them.
func (m *Manager) Unhealthy(uid types.UID) []Kill {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Kill
	for _, w := range m.workers[uid] {
		if w.kind == Readiness {
			continue
		}
		if m.results[resultKey{containerID: w.target.containerID, kind: w.kind}] != Failure {
			continue
		}
		if ks := m.kills[uid][w.target.container]; len(ks) > 0 && ks[len(ks)-1].ContainerID == w.target.containerID {
			out = append(out, ks[len(ks)-1])
		}
	}
	return out
}

func (m *Manager) result(containerID string, kind Kind) Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.results[resultKey{containerID: containerID, kind: kind}]
}

func (m *Manager) podIP(uid types.UID) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.podIPs[uid]
}

// set records a worker's new result, unless the worker has been ended
// meanwhile, and reports whether it changed.
func (m *Manager) set(w *worker, r Result, msg string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[w.uid][workerKey{container: w.target.container, kind: w.kind}] != w {
		return false
	}
	key := resultKey{containerID: w.target.containerID, kind: w.kind}
	if m.results[key] == r {
		return false
	}
	m.results[key] = r
	if w.kind == Startup && r == Success {
		// The container is ready as soon as its readiness probe says so,
		// not a readiness period later, as under the kubelet.
		if rw := m.workers[w.uid][workerKey{container: w.target.container, kind: Readiness}]; rw != nil && rw.target.containerID == w.target.containerID {
			select {
			case rw.wake <- struct{}{}:
			default:
			}
		}
	}
	if r == Failure && w.kind != Readiness {
		m.noteKillLocked(w.uid, Kill{
			Container: w.target.container, ContainerID: w.target.containerID, Grace: w.grace,
			Reason: w.kind.String() + " probe failed: " + msg,
		})
	}
	return true
}

// NoteKill records that the agent killed the instance for another reason
// than a probe (a failed postStart hook), so that its termination says
// why, as KillReason reports it.
func (m *Manager) NoteKill(uid types.UID, container, containerID, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noteKillLocked(uid, Kill{Container: container, ContainerID: containerID, Reason: reason})
}

func (m *Manager) noteKillLocked(uid types.UID, k Kill) {
	if m.kills[uid] == nil {
		m.kills[uid] = map[string][]Kill{}
	}
	ks := append(m.kills[uid][k.Container], k)
	if len(ks) > 2 {
		ks = ks[len(ks)-2:]
	}
	m.kills[uid][k.Container] = ks
}
