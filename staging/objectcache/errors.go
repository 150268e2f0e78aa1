package objectcache

import "errors"

var (
	// ErrInvalidOptions is wrapped by the error of NewCaching and
	// NewWatching for each option (or the kind) that cannot work; they are
	// reported together.
	ErrInvalidOptions = errors.New("invalid object cache options")

	// ErrNotRegistered is returned by Get for an object that no registered
	// pod references. The agent reads only what its pods use, and the Node
	// authorizer would refuse anything else.
	ErrNotRegistered = errors.New("object not referenced by any registered pod")

	// ErrNotSynced is returned by a watching manager's Get when the object's
	// first list did not complete within Options.SyncTimeout. The error also
	// wraps the last list or watch error, if any, so that
	// apierrors.IsForbidden and friends see through it.
	ErrNotSynced = errors.New("object cache not synced")

	// ErrStopped is returned by a watching manager's Get once the context
	// given to Run has ended.
	ErrStopped = errors.New("object cache stopped")

	// ErrAlreadyRunning is returned by a second call to Run.
	ErrAlreadyRunning = errors.New("object cache already running")
)
