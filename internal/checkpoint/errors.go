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
	// ErrInvalidRecord is returned by Apply for a record missing its UID,
	// pod or phase.
	ErrInvalidRecord = errors.New("invalid checkpoint record")
)
