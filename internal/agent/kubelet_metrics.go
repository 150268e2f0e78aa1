package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// The values of kubelet_pod_worker_duration_seconds' operation_type: the
// update types SyncPod is called with, then the kubelet's names for the
// workers' other calls.
const (
	opCreate = iota
	opUpdate
	opSync
	opKill
	opTerminated
)

var workerOperations = [...]string{opCreate: "create", opUpdate: "update", opSync: "sync", opKill: "kill", opTerminated: "terminated"}

// podStartBuckets are the kubelet's for kubelet_pod_start_duration_seconds:
// half a second to an hour.
var podStartBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// kubeletMetrics are the pod workers' and the pods' metrics under the
// kubelet's names, which its dashboards and the KubeletPodStartUpLatencyHigh
// alert read. The children are looked up once: an observation costs no
// label lookup. The zero kubeletMetrics records nothing.
type kubeletMetrics struct {
	workerDuration *metrics.HistogramVec
	byOperation    [len(workerOperations)]metrics.ObserverMetric
	podStart       *metrics.Histogram
	nodeName       *metrics.GaugeVec
}

func newKubeletMetrics(reg metrics.KubeRegistry, nodeName string) (kubeletMetrics, error) {
	m := kubeletMetrics{
		workerDuration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help:           "Duration of one pod worker call, in seconds, by operation: SyncPod by its update type (create, update, sync, kill), the termination (kill) and the clean-up (terminated).",
			Buckets:        metrics.DefBuckets,
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation_type"}),
		podStart: metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help:           "Time from the agent first seeing a pod (its kubernetes.io/config.seen) to the pod's first Running status, in seconds.",
			Buckets:        podStartBuckets,
			StabilityLevel: metrics.ALPHA,
		}),
		nodeName: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem: "kubelet", Name: "node_name",
			Help:           "The node's name; the value is always 1.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"node"}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.workerDuration, m.podStart, m.nodeName} {
			if err := reg.Register(c); err != nil {
				return m, err
			}
		}
	}
	for i, op := range workerOperations {
		m.byOperation[i] = m.workerDuration.WithLabelValues(op)
	}
	m.nodeName.WithLabelValues(nodeName).Set(1)
	return m, nil
}

// observeSyncPod records one SyncPod call under its update type.
func (m kubeletMetrics) observeSyncPod(t podworkers.UpdateType, d time.Duration) {
	if m.workerDuration == nil {
		return
	}
	i := opSync
	switch t {
	case podworkers.Create:
		i = opCreate
	case podworkers.Update:
		i = opUpdate
	case podworkers.Kill:
		i = opKill
	}
	m.byOperation[i].Observe(d.Seconds())
}

// observeWork records the workers' other calls; SyncPod's are recorded
// by the syncer, which knows their update type.
func (m kubeletMetrics) observeWork(w podworkers.Work, d time.Duration) {
	if m.workerDuration == nil {
		return
	}
	switch w {
	case podworkers.WorkTerminating, podworkers.WorkTerminatingRuntime:
		m.byOperation[opKill].Observe(d.Seconds())
	case podworkers.WorkTerminated:
		m.byOperation[opTerminated].Observe(d.Seconds())
	}
}

// observePodStart records a pod's first Running status at now; seen is
// when the agent first saw it.
func (m kubeletMetrics) observePodStart(seen, now time.Time) {
	if m.podStart == nil {
		return
	}
	m.podStart.Observe(now.Sub(seen).Seconds())
}

// startedNow reports whether a Running status now is the pod's first:
// stored is the status the agent held before, Pending or none, and, when
// none, the apiserver's does not already say Running (a pod started
// under an earlier run of the agent, which counted it then).
func startedNow(pod *corev1.Pod, stored *corev1.PodStatus) bool {
	if stored != nil {
		return stored.Phase == corev1.PodPending
	}
	return pod.Status.Phase != corev1.PodRunning
}

// firstSeen is when the pod's source first gave it to the agent (the
// annotation the config merger sets, as the kubelet's); ok is false
// without a readable one.
func firstSeen(pod *corev1.Pod) (time.Time, bool) {
	v, ok := pod.Annotations[podtypes.ConfigFirstSeenAnnotationKey]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}
