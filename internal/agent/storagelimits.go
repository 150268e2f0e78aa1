package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// storageLimits evicts, every interval, the pods whose emptyDir on the
// node's disk holds more than its sizeLimit, as the kubelet's eviction
// manager does: the pod fails with reason Evicted and the kubelet's
// message, and is stopped. (A Memory emptyDir is a tmpfs of its size: the
// kernel refuses writes past it.) Critical pods, static ones among them,
// are never evicted, as under the kubelet. It runs in its own goroutine:
// measuring a volume walks it.
type storageLimits struct {
	pods      *podmanager.Manager
	statuses  *status.Store
	vols      Volumes
	evictions *evictions
	events    *podEvents
	timeline  *timeline.Log
	// sync asks the pod's worker to sync it, which fails it.
	sync     func(podworkers.UpdatePodOptions)
	interval time.Duration
	clock    clock.WithTicker
	log      logr.Logger
}

func (l *storageLimits) run(ctx context.Context) error {
	return every(ctx, l.clock, l.interval, func(context.Context) { l.check() })
}

// check measures the limited emptyDirs of every pod that may still run.
func (l *storageLimits) check() {
	for _, pod := range l.pods.Pods() {
		if podtypes.IsCritical(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		if st := l.statuses.Status(pod.UID); st != nil && podtypes.IsTerminal(st.Phase) {
			continue
		}
		if why := l.overLimit(pod); why != "" && l.evictions.evict(pod.UID, why) {
			l.log.Info("Evicting a pod", "pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID, "reason", why)
			l.timeline.Record(pod.UID, timeline.KindWorker, "evicted: %s", why)
			l.events.evicted(pod, why)
			l.sync(podworkers.UpdatePodOptions{Type: podworkers.Sync, Pod: pod})
		}
	}
}

// overLimit is the kubelet's message for the first emptyDir of the pod
// over its sizeLimit, or "".
func (l *storageLimits) overLimit(pod *corev1.Pod) string {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.EmptyDir == nil || v.EmptyDir.Medium == corev1.StorageMediumMemory || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0 {
			continue
		}
		limit := v.EmptyDir.SizeLimit.Value()
		used, err := l.vols.EmptyDirUsage(pod.UID, v.Name, limit)
		if err != nil {
			continue // not set up yet, or gone meanwhile
		}
		if used > limit {
			return fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", v.Name, v.EmptyDir.SizeLimit.String())
		}
	}
	return ""
}
