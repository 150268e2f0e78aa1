package podworkers

import "errors"

var (
	// ErrInvalidOptions is wrapped by New's error for each option that
	// cannot work; they are reported together.
	ErrInvalidOptions = errors.New("invalid pod workers options")

	// ErrInvalidUpdate is returned by UpdatePod for an update that names no
	// pod, asks to run a pod known only to the runtime, or carries kill
	// options on an update that is not a kill.
	ErrInvalidUpdate = errors.New("invalid pod update")

	// ErrStopped is returned by UpdatePod once the context given to Run has
	// ended.
	ErrStopped = errors.New("pod workers stopped")

	// ErrAlreadyRunning is returned by a second call to Run.
	ErrAlreadyRunning = errors.New("pod workers already running")

	// ErrNetworkNotReady is for the Syncer to wrap when a pod cannot be
	// synced only because the pod network is not ready yet. Such a failure
	// is retried after Options.NetworkNotReadyBackoff instead of the longer
	// BackoffPeriod, since the network usually comes up within seconds.
	ErrNetworkNotReady = errors.New("network is not ready")

	// ErrTransient is for the Syncer to wrap when a failure is known to
	// clear within moments: the runtime still finishing a request made
	// before the agent restarted, for example. It is retried after
	// Options.NetworkNotReadyBackoff too.
	ErrTransient = errors.New("transient failure")
)
