package apisync

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
)

const mirrorHelp = "One series per static pod, in connected mode: its mirror pod's UID (empty while there is none) and state: " +
	"synced (the mirror mirrors this version and holds its newest status), status_pending (the status is being written), " +
	"missing (no current mirror yet), not_mirrorable (NodeRestriction would refuse it; the pod runs without one)."

// mirrorDesc is one series per static pod: its mirror pod's UID and state.
var mirrorDesc = metrics.NewDesc("nodeagent_static_pod_mirror", mirrorHelp,
	[]string{"namespace", "pod", "mirror_uid", "state"}, nil, metrics.ALPHA, "")

// RegisterMirrorMetrics registers a collector that reports the mirror
// state of every static pod among pods() when scraped, as Mirror tells the
// local API: one rule for both.
func (s *Sync) RegisterMirrorMetrics(reg metrics.KubeRegistry, pods func() []*corev1.Pod) error {
	return reg.CustomRegister(&mirrorCollector{pods: pods, mirror: s.Mirror})
}

type mirrorCollector struct {
	metrics.BaseStableCollector
	pods   func() []*corev1.Pod
	mirror func(*corev1.Pod) *Mirror
}

func (c *mirrorCollector) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- mirrorDesc }

func (c *mirrorCollector) CollectWithStability(ch chan<- metrics.Metric) {
	for _, pod := range c.pods() {
		m := c.mirror(pod)
		if m == nil {
			continue
		}
		ch <- metrics.NewLazyConstMetric(mirrorDesc, metrics.GaugeValue, 1,
			pod.Namespace, pod.Name, string(m.UID), mirrorState(m))
	}
}

func mirrorState(m *Mirror) string {
	switch {
	case m.Synced && m.StatusSynced:
		return "synced"
	case m.Synced:
		return "status_pending"
	case m.NotMirrorable:
		return "not_mirrorable"
	}
	return "missing"
}
