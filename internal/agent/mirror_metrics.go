package agent

import (
	"k8s.io/component-base/metrics"
)

const mirrorHelp = "One series per static pod, in connected mode: its mirror pod's UID (empty while there is none) and state: " +
	"synced (the mirror mirrors this version and holds its newest status), status_pending (the status is being written), " +
	"missing (no current mirror yet), not_mirrorable (NodeRestriction would refuse it; the pod runs without one)."

// mirrorDesc is one series per static pod: its mirror pod's UID and state.
var mirrorDesc = metrics.NewDesc(metricsNamespace+"_static_pod_mirror", mirrorHelp,
	[]string{"namespace", "pod", "mirror_uid", "state"}, nil, metrics.ALPHA, "")

// mirrorCollector reports the mirror state of every static pod when
// scraped, from what the local API shows: one rule for both.
type mirrorCollector struct {
	metrics.BaseStableCollector
	pods func() []PodInfo
}

func (c *mirrorCollector) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- mirrorDesc }

func (c *mirrorCollector) CollectWithStability(ch chan<- metrics.Metric) {
	for _, p := range c.pods() {
		if p.Mirror == nil {
			continue
		}
		ch <- metrics.NewLazyConstMetric(mirrorDesc, metrics.GaugeValue, 1,
			p.Pod.Namespace, p.Pod.Name, string(p.Mirror.UID), mirrorState(p.Mirror))
	}
}

func mirrorState(m *MirrorInfo) string {
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
