package podworkers

import "fmt"

// Phase is where a pod is in its worker's lifecycle.
type Phase int

const (
	// PhaseSync: the pod should run; SyncPod keeps it in shape. A static
	// pod waiting for an older pod of the same full name is in this phase.
	PhaseSync Phase = iota
	// PhaseTerminating: the pod has been asked to stop and some of its
	// containers may still run.
	PhaseTerminating
	// PhaseTerminated: no container of the pod runs; its cleanup may still
	// be in progress.
	PhaseTerminated
)

var phaseNames = [...]string{PhaseSync: "sync", PhaseTerminating: "terminating", PhaseTerminated: "terminated"}

func (p Phase) String() string {
	if p >= PhaseSync && p <= PhaseTerminated {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Work names the Syncer method a worker calls.
type Work int

const (
	workNone Work = iota
	// WorkSync is a call of SyncPod.
	WorkSync
	// WorkTerminating is a call of SyncTerminatingPod.
	WorkTerminating
	// WorkTerminatingRuntime is a call of SyncTerminatingRuntimePod.
	WorkTerminatingRuntime
	// WorkTerminated is a call of SyncTerminatedPod.
	WorkTerminated
)

var workNames = [...]string{
	workNone: "none", WorkSync: "sync", WorkTerminating: "terminating",
	WorkTerminatingRuntime: "terminating-runtime", WorkTerminated: "terminated",
}

func (w Work) String() string {
	if w >= workNone && w <= WorkTerminated {
		return workNames[w]
	}
	return fmt.Sprintf("Work(%d)", int(w))
}

// KnownPod is what SyncKnownPods reports about one pod worker.
type KnownPod struct {
	Phase Phase
	// Orphan is true when the pod was not in the desired set: its worker is
	// now terminating it, or has.
	Orphan bool
	// HasConfig is true when the worker has the pod's spec, false for a pod
	// known only to the runtime.
	HasConfig bool
	// Static is true for a static pod (from a file or HTTP source).
	Static bool
}
