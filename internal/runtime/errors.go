package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var (
	// ErrInvalidOptions is wrapped by New's error for Options that cannot
	// work.
	ErrInvalidOptions = errors.New("invalid runtime options")
	// ErrRuntimeUnavailable: nothing usable answers at the CRI endpoint (the
	// socket is missing, refuses connections, or does not answer in time).
	ErrRuntimeUnavailable = errors.New("container runtime unavailable")
	// ErrNotCRIv1: something answers at the endpoint, but not the CRI v1 API.
	ErrNotCRIv1 = errors.New("endpoint does not serve CRI v1")
	// ErrImageNeverPull: the image is absent and the pull policy is Never.
	ErrImageNeverPull = errors.New("image may not be pulled")
	// ErrImagePull: pulling the image failed.
	ErrImagePull = errors.New("image pull failed")
	// ErrImagePullBackOff: pulls of the image for the pod failed lately;
	// the next one waits out a back-off.
	ErrImagePullBackOff = errors.New("image pull backing off")
	// ErrInvalidImageName: the container's image reference does not parse.
	ErrInvalidImageName = errors.New("invalid image name")
	// ErrNoLog: the pod's log directory holds no log of the container
	// instance asked for.
	ErrNoLog = errors.New("no log of the container instance")
	// ErrUnsupported: the pod asks for something this runtime layer does
	// not provide (such as an environment variable from a Secret).
	ErrUnsupported = errors.New("not supported")
	// ErrContainerConfig: a container's environment names a ConfigMap, a
	// Secret or a key of one that is missing (and not optional), or a
	// resource value that cannot be had; it clears once the object exists.
	// The cause (apierrors.IsNotFound) stays wrapped.
	ErrContainerConfig = errors.New("container configuration unresolved")
	// ErrSecurityContext: a container's securityContext cannot be honoured
	// on this node (a profile it lacks, runAsNonRoot with a root image, ...).
	// The error is a *SecurityError naming the container and the field.
	ErrSecurityContext = errors.New("securityContext cannot be honoured")
	// ErrCrashLoopBackOff: a container exited and may not restart yet. The
	// error is a *BackoffError that says until when.
	ErrCrashLoopBackOff = errors.New("crash loop back-off")
	// ErrCreateSandbox, ErrCreateContainer and ErrStartContainer wrap the
	// runtime's refusal of the step they name.
	ErrCreateSandbox   = errors.New("creating pod sandbox failed")
	ErrCreateContainer = errors.New("creating container failed")
	ErrStartContainer  = errors.New("starting container failed")
	// ErrKillPod: some container or sandbox of the pod could not be stopped
	// or removed.
	ErrKillPod = errors.New("killing pod failed")
	// ErrNameReserved: the runtime refused to create a sandbox or container
	// because its name is reserved by a request still in progress, such as
	// one an agent made just before it was killed. It clears as soon as
	// that request ends; the next sync then finds what it created, if
	// anything. It comes wrapped with ErrCreateSandbox or ErrCreateContainer.
	ErrNameReserved = errors.New("name reserved by a request in progress")
	// ErrStillStarting: an instance that never started could not be
	// removed to make way for its replacement, typically because a start
	// an agent asked for just before it was killed is still under way. It
	// clears when that start ends.
	ErrStillStarting = errors.New("an earlier start of the container is still under way")
)

// nameReserved tells containerd's refusal of a name a request in flight
// has reserved ("failed to reserve sandbox name ...: name ... is reserved
// for ..."); the CRI gives it no code of its own.
func nameReserved(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is reserved for")
}

// createError wraps a creation step's refusal with the step's error and,
// for a reserved name, ErrNameReserved.
func createError(step, err error) error {
	if nameReserved(err) {
		return fmt.Errorf("%w: %w: %w", step, ErrNameReserved, err)
	}
	return fmt.Errorf("%w: %w", step, err)
}

// ImageError says why a container's image is not there to run. It
// matches its Reason (ErrImagePull, ErrImagePullBackOff,
// ErrInvalidImageName or ErrImageNeverPull) with errors.Is, and its
// message is worded as the kubelet words the container's waiting message.
type ImageError struct {
	Reason error
	// Image is the reference as the container names it.
	Image   string
	Message string
	// Err is the cause (the runtime's refusal of a pull), if any.
	Err error
}

func (e *ImageError) Error() string { return e.Message }

// Is makes errors.Is(err, e.Reason) true.
func (e *ImageError) Is(target error) bool { return target == e.Reason }

func (e *ImageError) Unwrap() error { return e.Err }

// BackoffError says that a crashed container waits out its back-off. It
// matches ErrCrashLoopBackOff with errors.Is.
type BackoffError struct {
	Container string
	// Until is when the container may restart.
	Until time.Time
	// Delay is the back-off that applies to this crash.
	Delay time.Duration
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("back-off %s restarting failed container %q (until %s)", e.Delay, e.Container, e.Until.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrCrashLoopBackOff) true.
func (e *BackoffError) Is(target error) bool { return target == ErrCrashLoopBackOff }

// WaitingReason names the kubelet's waiting reason for a container whose
// start failed with err ("ErrImagePull", "CrashLoopBackOff", ...), for the
// container status the agent reports; "" if err names none.
func WaitingReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{ErrCrashLoopBackOff, "CrashLoopBackOff"},
		{ErrImageNeverPull, "ErrImageNeverPull"},
		{ErrImagePullBackOff, "ImagePullBackOff"},
		{ErrImagePull, "ErrImagePull"},
		{ErrInvalidImageName, "InvalidImageName"},
		{ErrCreateSandbox, "CreatePodSandboxError"},
		{ErrUnsupported, "CreateContainerConfigError"},
		{ErrSecurityContext, "CreateContainerConfigError"},
		{ErrContainerConfig, "CreateContainerConfigError"},
		{ErrCreateContainer, "CreateContainerError"},
		{ErrStartContainer, "RunContainerError"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}
