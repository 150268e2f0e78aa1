package checkpoint

import "errors"

var (
	// ErrNewerSchema means the file was written by a newer agent. It is
	// left untouched.
	ErrNewerSchema = errors.New("checkpoint written by a newer schema")
	// ErrLocked means another process holds the checkpoint open.
	ErrLocked = errors.New("checkpoint locked by another process")
	// ErrCorruptRecord marks a record that could not be decoded; List skips
	// it and reports it.
	ErrCorruptRecord = errors.New("corrupt checkpoint record")
	// ErrNotFound is returned by SetPhase for a UID the store does not hold.
	ErrNotFound = errors.New("pod not in checkpoint")
	// ErrInvalidRecord is returned by PutPod for a record missing its UID or
	// pod.
	ErrInvalidRecord = errors.New("invalid checkpoint record")
)
