package imagegc

import "k8s.io/component-base/metrics"

// Why an image was removed, as the kubelet labels it.
const (
	reasonAge   = "age"
	reasonSpace = "space"
)

type gcMetrics struct {
	removed, freed *metrics.CounterVec
	removeFailures *metrics.Counter
	failedPasses   *metrics.Counter
}

// newMetrics registers on reg, if not nil; unregistered, component-base
// makes the metrics inert.
func newMetrics(reg metrics.KubeRegistry) (*gcMetrics, error) {
	m := &gcMetrics{
		removed: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "image_gc", Name: "images_removed_total",
			Help:           "Images removed by image garbage collection, by reason: age (unused for longer than --image-maximum-gc-age) or space (the image filesystem over --image-gc-high-threshold).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"reason"}),
		freed: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "image_gc", Name: "freed_bytes_total",
			Help:           "Sizes, as the runtime reports them, of the images removed by image garbage collection, by reason.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"reason"}),
		removeFailures: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "image_gc", Name: "remove_failures_total",
			Help:           "Image removals by image garbage collection that the runtime refused.",
			StabilityLevel: metrics.ALPHA,
		}),
		failedPasses: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "nodeagent", Subsystem: "image_gc", Name: "failures_total",
			Help:           "Image garbage collection passes that failed: the runtime or the filesystem could not be read, a removal failed, or not enough could be freed to get under --image-gc-low-threshold.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
	if reg != nil {
		for _, c := range []metrics.Registerable{m.removed, m.freed, m.removeFailures, m.failedPasses} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
