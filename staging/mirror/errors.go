package mirror

import "errors"

var (
	// ErrInvalidOptions is wrapped by New's error for each missing option;
	// they are reported together.
	ErrInvalidOptions = errors.New("invalid mirror client options")
	// ErrMirrorHashMismatch is returned by Create when a pod with the static
	// pod's full name exists but does not mirror this version of it.
	ErrMirrorHashMismatch = errors.New("an existing pod with this name does not mirror this static pod's hash")
	// ErrNodeUID is returned when the node's UID cannot be determined, so
	// that no owner reference can be set.
	ErrNodeUID = errors.New("node UID unknown")
	// ErrNotMirrorable is returned by CheckMirrorable for a static pod whose
	// mirror NodeRestriction would refuse: the pod runs, unmirrored.
	ErrNotMirrorable = errors.New("static pod cannot be mirrored")
)
