package pleg

import (
	"time"

	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// containerStates are the values of kubelet_running_containers'
// container_state label: the runtime's states, as the kubelet names them.
var containerStates = [...]runtime.ContainerState{
	runtime.ContainerStateCreated, runtime.ContainerStateRunning, runtime.ContainerStateExited, runtime.ContainerStateUnknown,
}

// plegMetrics are the kubelet's PLEG metrics, under its names, so that
// the kubelet dashboards and the KubeletPlegDurationHigh alert read them.
// Only the relist goroutine observes them; a relist costs no label
// lookup: the children are looked up once, when registered.
type plegMetrics struct {
	duration, interval *metrics.Histogram
	lastSeen           *metrics.Gauge
	runningPods        *metrics.Gauge
	containers         *metrics.GaugeVec
	byState            [len(containerStates)]metrics.GaugeMetric
}

func newMetrics(reg metrics.KubeRegistry) (*plegMetrics, error) {
	m := &plegMetrics{
		duration: metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_duration_seconds",
			Help:           "Duration of a relist of the runtime's pods, failed or not, in seconds.",
			Buckets:        metrics.DefBuckets,
			StabilityLevel: metrics.ALPHA,
		}),
		interval: metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_interval_seconds",
			Help:           "Time from the start of the last successful relist to the start of the next relist, in seconds.",
			Buckets:        metrics.DefBuckets,
			StabilityLevel: metrics.ALPHA,
		}),
		lastSeen: metrics.NewGauge(&metrics.GaugeOpts{
			Subsystem: "kubelet", Name: "pleg_last_seen_seconds",
			Help:           "When the PLEG was last seen active, in seconds since the epoch: a successful relist began, or it found the exit watch covering every running container, which puts the next relist off.",
			StabilityLevel: metrics.ALPHA,
		}),
		runningPods: metrics.NewGauge(&metrics.GaugeOpts{
			Subsystem: "kubelet", Name: "running_pods",
			Help:           "Pods with a running sandbox, as the last successful relist saw them.",
			StabilityLevel: metrics.ALPHA,
		}),
		containers: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem: "kubelet", Name: "running_containers",
			Help:           "Containers the runtime holds, by state (created, running, exited, unknown), as the last successful relist saw them.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"container_state"}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.duration, m.interval, m.lastSeen, m.runningPods, m.containers} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	// Looked up after registering: before, component-base hands out inert
	// children.
	for i, s := range containerStates {
		m.byState[i] = m.containers.WithLabelValues(string(s))
	}
	return m, nil
}

// relisted records a relist that began at start and ended at end; ok if
// it succeeded, previous the start of the last successful one (zero if
// none).
func (m *plegMetrics) relisted(start, end, previous time.Time, ok bool) {
	if !previous.IsZero() {
		m.interval.Observe(start.Sub(previous).Seconds())
	}
	m.duration.Observe(end.Sub(start).Seconds())
	if ok {
		m.lastSeen.Set(float64(start.Unix()))
	}
}

// covered records that the PLEG found, at t, that the exit watch covers
// every running container: it is active, and what it knows is current.
func (m *plegMetrics) covered(t time.Time) {
	m.lastSeen.Set(float64(t.Unix()))
}

// counted sets the running pods and the containers by state from what a
// relist saw. A state none is in reads 0, not its last count.
func (m *plegMetrics) counted(s snapshot) {
	var pods int
	var states [len(containerStates)]int
	for _, p := range s {
		for _, sb := range p.sandboxes {
			if sb.state == runtime.SandboxReady {
				pods++
				break
			}
		}
		for _, c := range p.containers {
			for i, st := range containerStates {
				if c.state == st {
					states[i]++
					break
				}
			}
		}
	}
	m.runningPods.Set(float64(pods))
	for i, n := range states {
		m.byState[i].Set(float64(n))
	}
}
