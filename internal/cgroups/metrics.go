package cgroups

import (
	"time"

	"k8s.io/component-base/metrics"
)

// The values of kubelet_cgroup_manager_duration_seconds' operation_type.
const (
	opCreate = iota
	opUpdate
	opDestroy
)

var operations = [...]string{opCreate: "create", opUpdate: "update", opDestroy: "destroy"}

// managerMetrics time the manager's cgroup operations under the kubelet's
// name, which its dashboard plots. The children are looked up once.
type managerMetrics struct {
	duration *metrics.HistogramVec
	byOp     [len(operations)]metrics.ObserverMetric
}

// newMetrics registers on reg, if not nil; unregistered, the metrics are
// inert.
func newMetrics(reg metrics.KubeRegistry) (*managerMetrics, error) {
	m := &managerMetrics{duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: "kubelet", Name: "cgroup_manager_duration_seconds",
		Help:           "Duration of the creation, update (limits written again) and removal of a pod's or QoS class's cgroup, in seconds.",
		Buckets:        metrics.DefBuckets,
		StabilityLevel: metrics.ALPHA,
	}, []string{"operation_type"})}
	if reg != nil {
		if err := reg.Register(m.duration); err != nil {
			return nil, err
		}
	}
	for i, op := range operations {
		m.byOp[i] = m.duration.WithLabelValues(op)
	}
	return m, nil
}

// since records an operation that began at start.
func (m *managerMetrics) since(op int, start time.Time) {
	m.byOp[op].Observe(time.Since(start).Seconds())
}
