package volumes

import "errors"

var (
	// ErrUnsupportedVolume: the pod uses a volume kind (or medium) this
	// package does not set up.
	ErrUnsupportedVolume = errors.New("unsupported volume")
	// ErrHostPathType: a hostPath volume's path is missing or of another
	// type than the volume's type asks for.
	ErrHostPathType = errors.New("hostPath type check failed")
	// ErrInvalidMount: a volumeMount names an unknown volume or an unsafe
	// subPath.
	ErrInvalidMount = errors.New("invalid volume mount")
	// ErrInvalidOptions is wrapped by New's error for Options that cannot
	// work.
	ErrInvalidOptions = errors.New("invalid volumes options")
)
