package podworkers

import "time"

// Metrics receives what the workers measure. The agent implements it with
// its metrics registry; this module depends on none. Methods are called
// with an internal lock held, so that reports arrive in the order of the
// changes they describe: they must be quick and must not call back into
// PodWorkers.
type Metrics interface {
	// WorkerPhases reports how many pods are in each phase, whenever any
	// count changes.
	WorkerPhases(PhaseCounts)
	// ObserveSync reports how long one Syncer call took, failed or not.
	ObserveSync(work Work, d time.Duration)
	// QueueDepth reports how many pods the work queue holds, whenever the
	// number changes.
	QueueDepth(n int)
}

// PhaseCounts counts known pods by phase.
type PhaseCounts struct {
	Sync, Terminating, Terminated int
}

func (c *PhaseCounts) add(p Phase, n int) {
	switch p {
	case PhaseSync:
		c.Sync += n
	case PhaseTerminating:
		c.Terminating += n
	case PhaseTerminated:
		c.Terminated += n
	}
}

// NoopMetrics discards every measurement; it is the default.
type NoopMetrics struct{}

func (NoopMetrics) WorkerPhases(PhaseCounts)        {}
func (NoopMetrics) ObserveSync(Work, time.Duration) {}
func (NoopMetrics) QueueDepth(int)                  {}
