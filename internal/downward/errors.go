package downward

import "errors"

// ErrUnsupported: a field path or resource a pod names is not one the
// downward API provides here.
var ErrUnsupported = errors.New("not supported by the downward API")
