package localapi

import "time"

// The wire types of the local API. Field names are stable: manifestctl and
// scripts read them.

// PodList is the answer of GET /v1/pods, ordered by namespace and name.
type PodList struct {
	Pods []Pod `json:"pods"`
}

// Pod is one pod as the agent sees it.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Source is where the pod came from: file, http or api.
	Source string `json:"source"`
	// ConfigHash is the hash of the pod's manifest (the
	// kubernetes.io/config.hash annotation).
	ConfigHash string `json:"configHash,omitempty"`
	// Origin is the manifest file or URL the pod came from, when known.
	Origin string `json:"origin,omitempty"`
	// WorkerPhase is the phase of the pod's worker in the agent: sync,
	// terminating, terminated; or refused for a pod held back before any
	// worker runs it (Reason says why, such as HostPortConflict).
	WorkerPhase string `json:"workerPhase,omitempty"`
	// Restored is true when the agent brought the pod back from its
	// checkpoint at start, before the pod's source delivered it (the
	// source may be down). Adopted is true when the agent found the pod's
	// containers running at start and kept them instead of restarting them.
	Restored bool `json:"restored,omitempty"`
	Adopted  bool `json:"adopted,omitempty"`
	// Phase is the pod's phase as its status reports it: Pending, Running,
	// Succeeded, Failed.
	Phase   string `json:"phase,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	PodIP   string `json:"podIP,omitempty"`
	// StartTime is when the agent first acted on the pod.
	StartTime *time.Time `json:"startTime,omitempty"`
	// Conditions are the pod's, as the API status has them (Ready,
	// ContainersReady, ...): what readiness probes decide shows here.
	Conditions     []Condition `json:"conditions,omitempty"`
	InitContainers []Container `json:"initContainers,omitempty"`
	Containers     []Container `json:"containers,omitempty"`
	// Mirror is a static pod's mirror pod in the apiserver, when the
	// agent is connected to one.
	Mirror *Mirror `json:"mirror,omitempty"`
}

// Mirror is the state of a static pod's mirror pod.
type Mirror struct {
	// UID is the mirror pod's UID, empty while there is none.
	UID string `json:"uid,omitempty"`
	// Synced is true when the mirror exists and mirrors this version of
	// the pod; StatusSynced when it also holds the pod's newest status.
	Synced       bool `json:"synced"`
	StatusSynced bool `json:"statusSynced"`
	// Problem says what keeps the mirror from being current, such as a
	// pod that NodeRestriction does not let the node mirror.
	Problem string `json:"problem,omitempty"`
}

// The states a Container can be in.
const (
	StateWaiting    = "waiting"
	StateRunning    = "running"
	StateTerminated = "terminated"
)

// Container is the status of one container of a pod.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image,omitempty"`
	// ContainerID is the runtime's ID, as "containerd://<id>".
	ContainerID  string `json:"containerID,omitempty"`
	State        string `json:"state,omitempty"`
	Ready        bool   `json:"ready"`
	RestartCount int32  `json:"restartCount"`
	// Reason and Message explain the current state (CrashLoopBackOff,
	// Completed, Error, ...).
	Reason    string     `json:"reason,omitempty"`
	Message   string     `json:"message,omitempty"`
	ExitCode  *int32     `json:"exitCode,omitempty"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// LastTermination is why the previous instance ended, if one did.
	LastTermination *Termination `json:"lastTermination,omitempty"`
	// Process is what the agent knows of a running container's process:
	// ProcessWatched, ProcessExited, or "" when it does not watch it.
	Process string `json:"process,omitempty"`
}

// What the agent knows of a running container's process (Container.Process).
const (
	// ProcessWatched: the agent waits on the process, and sees its exit
	// within milliseconds, not at its next relist.
	ProcessWatched = "watched"
	// ProcessExited: the process has exited; the runtime has not recorded
	// the exit yet, so the state still says running, and the exit code is
	// not known yet.
	ProcessExited = "exited"
)

// Condition is one pod condition.
type Condition struct {
	Type               string     `json:"type"`
	Status             string     `json:"status"`
	Reason             string     `json:"reason,omitempty"`
	Message            string     `json:"message,omitempty"`
	LastTransitionTime *time.Time `json:"lastTransitionTime,omitempty"`
}

// Termination says how a container instance ended.
type Termination struct {
	ExitCode   int32      `json:"exitCode"`
	Reason     string     `json:"reason,omitempty"`
	Message    string     `json:"message,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// PodDetail is the answer of GET /v1/pods/{namespace}/{name}.
type PodDetail struct {
	Pod
	Timeline []TimelineEntry `json:"timeline"`
}

// TimelineEntry is one thing that happened to a pod: its config was seen,
// its worker changed phase, the runtime acted.
type TimelineEntry struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

// ManifestErrors is the answer of GET /v1/manifests/errors: the current
// refusal of every refused manifest file, by path, and the HTTP source's
// last error.
type ManifestErrors struct {
	Files []ManifestError `json:"files"`
	HTTP  *ManifestError  `json:"http,omitempty"`
}

// ManifestError says why one manifest is refused.
type ManifestError struct {
	// Origin is the file path or URL.
	Origin string `json:"origin"`
	// Reason classifies the refusal (Syntax, UnknownField, Invalid,
	// DuplicateName, FetchFailed, ...).
	Reason string `json:"reason,omitempty"`
	// Fields lists the offending fields, for example
	// spec.containers[0].image, when the refusal names any.
	Fields []string `json:"fields,omitempty"`
	// Message is the whole explanation, as the agent logs it.
	Message string `json:"message"`
}

// Health is the answer of GET /v1/healthz. The server answers 200 whenever
// it serves; Ready says whether the agent is ready, and Error why not.
type Health struct {
	Status string `json:"status"`
	Ready  bool   `json:"ready"`
	Error  string `json:"error,omitempty"`
	// Problems are faults that stop no pod (a checkpoint that cannot be
	// written), one sentence each.
	Problems []string `json:"problems,omitempty"`
}

// errorBody is the JSON body of every non-200 answer.
type errorBody struct {
	Error string `json:"error"`
}
