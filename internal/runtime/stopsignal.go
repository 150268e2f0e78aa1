package runtime

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// stopSignal is the CRI form of a container's lifecycle.stopSignal. A
// runtime that would drop it unread is refused: containerd reads the
// field from 2.1 on, and an older one would stop the container with its
// image's signal while the pod says otherwise.
func (r *Runtime) stopSignal(s corev1.Signal) (runtimeapi.Signal, error) {
	if r.version.RuntimeName == "containerd" && !versionAtLeast(r.version.RuntimeVersion, 2, 1) {
		return 0, fmt.Errorf("%w: lifecycle.stopSignal %s: containerd %s does not read a container's stop signal (2.1 and later do)", ErrContainerConfig, s, r.version.RuntimeVersion)
	}
	v, ok := runtimeapi.Signal_value["SIGNAL_"+string(s)]
	if !ok || v == 0 {
		return 0, fmt.Errorf("%w: lifecycle.stopSignal %q is no signal the runtime knows", ErrContainerConfig, s)
	}
	return runtimeapi.Signal(v), nil
}

// versionAtLeast tells whether a version such as "1.6.20~ds1" or
// "v2.1.4" is major.minor or later; one that does not parse is not.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
