package prober

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Kind is which probe of a container.
type Kind int

const (
	Liveness Kind = iota
	Readiness
	Startup
)

// String is the kind as the kubelet's metrics label it.
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "Unknown"
}

// Result is what a probe's outcomes amount to.
type Result int

const (
	// Unknown: not probed yet, or the probe could not be run.
	Unknown Result = iota
	Success
	Failure
	// successWithWarning is a probe's success that deserves a word (an
	// HTTP probe stopped at a redirect to another host): it counts as a
	// Success, and its message is reported as a warning.
	successWithWarning
)

func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case Failure:
		return "failure"
	}
	return "unknown"
}

// Update is a probe's result changing for one container instance.
type Update struct {
	PodUID      types.UID
	Container   string
	ContainerID string
	Kind        Kind
	Result      Result
	// Message is the last probe's output or error, bounded.
	Message string
	// Warning: the update is no change of Result but a warning the
	// probe's success carried, in Message; reported once per instance
	// and message, not at every period.
	Warning bool
	// Due is when the probe that found Result was due (its period or
	// initial delay ended, or a startup probe's success woke it); Ran
	// when its outcome was in hand.
	Due, Ran time.Time
}

// Kill is a container instance whose liveness or startup probe failed:
// stop it with Grace seconds (the probe's terminationGracePeriodSeconds, or
// the pod's).
type Kill struct {
	Container   string
	ContainerID string
	Grace       int64
	Reason      string
}
