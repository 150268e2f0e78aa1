package prober

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/timeline"
)

// The steps of a result's change, as the step label of
// nodeagent_prober_result_step_duration_seconds names them.
const (
	// stepRan: from when the probe was due to its outcome in hand (the
	// timer's lateness and the probe's own time).
	stepRan = "ran"
	// stepStatus: from the outcome to the pod's status holding it in the
	// agent's status store, which is what the local API serves.
	stepStatus = "status"
	// stepAPIServer: from the outcome to the status patch that carries it
	// answered by the apiserver (the mirror pod's or the API pod's).
	stepAPIServer = "apiserver"
)

// maxPendingWrites bounds the changes of one pod that await their write:
// a pod whose writes fail for long keeps its newest ones.
const maxPendingWrites = 16

// StepsOptions configure Steps.
type StepsOptions struct {
	// Timeline receives an entry per change, and one when it is written
	// to the apiserver.
	Timeline *timeline.Log
	// Registry receives nodeagent_prober_result_step_duration_seconds;
	// nil registers none.
	Registry metrics.KubeRegistry
	// Writes: the statuses are written to an apiserver (connected mode),
	// whose step is followed.
	Writes bool
	Clock  clock.PassiveClock
}

// Steps follows each change of a probe's result from the probe being due
// to the status that shows it, in the agent (Shown) and, in connected
// mode, in the apiserver (Written): it records when each step was taken
// in the pod's timeline and times it in a histogram. It is safe for
// concurrent use.
type Steps struct {
	log      *timeline.Log
	clock    clock.PassiveClock
	writes   bool
	duration *metrics.HistogramVec

	mu sync.Mutex
	// pending are, by pod, the changes shown in a status of which no
	// generation as new has been written yet.
	pending map[types.UID][]pendingWrite
}

type pendingWrite struct {
	what string
	kind Kind
	ran  time.Time
	gen  uint64
}

// NewSteps returns Steps.
func NewSteps(opts StepsOptions) (*Steps, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Steps{
		log: opts.Timeline, clock: opts.Clock, writes: opts.Writes, pending: map[types.UID][]pendingWrite{},
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace: "nodeagent", Subsystem: "prober", Name: "result_step_duration_seconds",
			Help: "Time of each step of a probe result's change: step ran from the probe due to its outcome, " +
				"status from the outcome to the pod's status in the agent (served by the local API), " +
				"apiserver from the outcome to the status written to the apiserver.",
			Buckets:        []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
			StabilityLevel: metrics.ALPHA,
		}, []string{"probe_type", "step"}),
	}
	if opts.Registry != nil {
		if err := opts.Registry.Register(s.duration); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Shown records the change u, described by what, as the pod's status
// took it in at shown, under generation gen of the status store; gen 0:
// the status did not change (a liveness result shows in no status), a
// zero shown: the pod has no status yet, its first sync will show it.
func (s *Steps) Shown(u Update, what string, shown time.Time, gen uint64) {
	if s == nil {
		return
	}
	msg := what
	if !u.Due.IsZero() && !u.Ran.IsZero() {
		msg += fmt.Sprintf("; due %s, result after %s", u.Due.Format("15:04:05.000000"), ms(u.Ran.Sub(u.Due)))
		s.observe(u.Kind, stepRan, u.Ran.Sub(u.Due))
	}
	switch {
	case shown.IsZero() || u.Ran.IsZero():
	case gen == 0:
		msg += ", status unchanged"
	default:
		msg += fmt.Sprintf(", in the status %s after it", ms(shown.Sub(u.Ran)))
		s.observe(u.Kind, stepStatus, shown.Sub(u.Ran))
	}
	s.log.Record(u.PodUID, timeline.KindProbe, "%s", msg)
	if !s.writes || gen == 0 || u.Ran.IsZero() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := append(s.pending[u.PodUID], pendingWrite{what: what, kind: u.Kind, ran: u.Ran, gen: gen})
	if len(ps) > maxPendingWrites {
		ps = ps[len(ps)-maxPendingWrites:]
	}
	s.pending[u.PodUID] = ps
}

// Written records that the apiserver holds the pod's status as of
// generation gen: every change shown in it, or in an older one, has
// reached the apiserver now.
func (s *Steps) Written(uid types.UID, gen uint64) {
	if s == nil || !s.writes {
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	var done []pendingWrite
	ps := s.pending[uid]
	kept := ps[:0]
	for _, p := range ps {
		if p.gen <= gen {
			done = append(done, p)
		} else {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		delete(s.pending, uid)
	} else {
		s.pending[uid] = kept
	}
	s.mu.Unlock()
	for _, p := range done {
		s.observe(p.kind, stepAPIServer, now.Sub(p.ran))
		s.log.Record(uid, timeline.KindProbe, "%s: in the apiserver %s after the result", p.what, ms(now.Sub(p.ran)))
	}
}

// Forget drops what awaits the pod's writes.
func (s *Steps) Forget(uid types.UID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, uid)
}

func (s *Steps) observe(k Kind, step string, d time.Duration) {
	s.duration.WithLabelValues(k.String(), step).Observe(d.Seconds())
}

// ms is a duration as the timeline shows a step: milliseconds to the
// microsecond.
func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }
