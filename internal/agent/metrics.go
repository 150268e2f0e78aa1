package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/staging/podworkers"
)

const metricsNamespace = "nodeagent"

// agentMetrics are the pod workers' measurements (it implements
// podworkers.Metrics) and the pods by API phase. Without a registry the
// metrics stay unregistered, and component-base makes them inert.
type agentMetrics struct {
	workers   *metrics.GaugeVec
	syncTime  *metrics.HistogramVec
	queue     *metrics.Gauge
	podPhases *metrics.GaugeVec
	// adopted: pods whose running containers a first sync kept.
	adopted *metrics.Gauge

	// The kubelet's, under its names (kubelet_metrics.go).
	kubelet kubeletMetrics
}

var _ podworkers.Metrics = (*agentMetrics)(nil)

func newMetrics(reg metrics.KubeRegistry, nodeName string) (*agentMetrics, error) {
	m := &agentMetrics{
		workers: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: "pod_workers", Name: "workers",
			Help:           "Pod workers by lifecycle phase (sync, terminating, terminated).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"phase"}),
		syncTime: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace: metricsNamespace, Subsystem: "pod_workers", Name: "sync_duration_seconds",
			Help:           "Duration of the pod workers' Syncer calls, by call (sync, terminating, terminating-runtime, terminated).",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
			StabilityLevel: metrics.ALPHA,
		}, []string{"work"}),
		queue: metrics.NewGauge(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: "pod_workers", Name: "queue_depth",
			Help:           "Pods waiting in the work queue for a resync or the end of a back-off.",
			StabilityLevel: metrics.ALPHA,
		}),
		podPhases: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: "agent", Name: "pods",
			Help:           "Pods with a status, by phase (Pending, Running, Succeeded, Failed).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"phase"}),
		adopted: metrics.NewGauge(&metrics.GaugeOpts{
			Namespace: metricsNamespace, Name: "adopted_pods",
			Help:           "Pods adopted since start: found running at their first sync, their containers kept, not restarted.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.workers, m.syncTime, m.queue, m.podPhases, m.adopted} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if m.kubelet, err = newKubeletMetrics(reg, nodeName); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *agentMetrics) WorkerPhases(c podworkers.PhaseCounts) {
	m.workers.WithLabelValues(podworkers.PhaseSync.String()).Set(float64(c.Sync))
	m.workers.WithLabelValues(podworkers.PhaseTerminating.String()).Set(float64(c.Terminating))
	m.workers.WithLabelValues(podworkers.PhaseTerminated.String()).Set(float64(c.Terminated))
}

func (m *agentMetrics) ObserveSync(w podworkers.Work, d time.Duration) {
	m.syncTime.WithLabelValues(w.String()).Observe(d.Seconds())
	m.kubelet.observeWork(w, d)
}

func (m *agentMetrics) QueueDepth(n int) { m.queue.Set(float64(n)) }

// PodPhases sets the pods-by-phase gauge; the status store calls it.
func (m *agentMetrics) PodPhases(counts map[corev1.PodPhase]int) {
	for _, p := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown} {
		m.podPhases.WithLabelValues(string(p)).Set(float64(counts[p]))
	}
}
