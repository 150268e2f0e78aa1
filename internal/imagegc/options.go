package imagegc

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// Runtime is what garbage collection needs of the container runtime;
// *runtime.Runtime satisfies it.
type Runtime interface {
	ListImages(ctx context.Context) ([]runtime.Image, error)
	ImagesInUse(ctx context.Context) (map[string]bool, error)
	ImageFilesystem(ctx context.Context) (runtime.ImageFs, error)
	RemoveImage(ctx context.Context, id string) error
	SandboxImage(ctx context.Context) (string, error)
}

// The kubelet's defaults.
const (
	DefaultHighThresholdPercent = 85
	DefaultLowThresholdPercent  = 80
	DefaultMinAge               = 2 * time.Minute
	DefaultPeriod               = 5 * time.Minute
)

// FsStats is a filesystem's size and what is left of it for unprivileged
// users, in bytes.
type FsStats struct {
	Capacity, Available uint64
}

// Options configure a Manager.
type Options struct {
	Runtime Runtime
	// HighThresholdPercent is the usage of the image filesystem, in
	// percent, at which unused images are removed; 100 with no MaxAge
	// turns garbage collection off.
	HighThresholdPercent int
	// LowThresholdPercent is the usage to bring the filesystem under;
	// less than HighThresholdPercent.
	LowThresholdPercent int
	// MinAge is how long an image must have been known before it may be
	// removed.
	MinAge time.Duration
	// MaxAge, if not 0, removes an image unused for longer, whatever the
	// usage; more than MinAge.
	MaxAge time.Duration
	// Period is the time between passes; DefaultPeriod if 0.
	Period time.Duration
	// Statfs measures the filesystem at a path; statfs(2) if nil.
	Statfs func(path string) (FsStats, error)
	// Recorder, if not nil, receives the events on the Node NodeName;
	// without one, failures are logged only.
	Recorder record.EventRecorder
	NodeName string
	// AfterRemoval, if set, is called after a pass that removed images,
	// as the kubelet's post-GC hooks (which prune its image pull records).
	AfterRemoval func(ctx context.Context)
	// Registry receives the metrics; nil registers none.
	Registry metrics.KubeRegistry
	Clock    clock.WithTicker
	Logger   logr.Logger
}

// ErrInvalidOptions is wrapped by the error of New and Validate for
// Options that cannot work.
var ErrInvalidOptions = errors.New("invalid image garbage collection options")

// Validate checks the policy as the kubelet checks its configuration,
// reporting every problem at once, each wrapping ErrInvalidOptions. names,
// if not nil, says what to call each field in the errors (the command
// gives its flags' names); a field it lacks keeps its own name.
func (o Options) Validate(names map[string]string) error {
	n := func(field string) string {
		if name, ok := names[field]; ok {
			return name
		}
		return field
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...)))
	}
	if o.HighThresholdPercent < 0 || o.HighThresholdPercent > 100 {
		bad("%s %d must be between 0 and 100, inclusive", n("HighThresholdPercent"), o.HighThresholdPercent)
	}
	if o.LowThresholdPercent < 0 || o.LowThresholdPercent > 100 {
		bad("%s %d must be between 0 and 100, inclusive", n("LowThresholdPercent"), o.LowThresholdPercent)
	}
	if o.LowThresholdPercent >= o.HighThresholdPercent {
		bad("%s %d must be less than %s %d", n("LowThresholdPercent"), o.LowThresholdPercent, n("HighThresholdPercent"), o.HighThresholdPercent)
	}
	if o.MinAge < 0 {
		bad("%s %v must not be negative", n("MinAge"), o.MinAge)
	}
	if o.MaxAge < 0 {
		bad("%s %v must not be negative", n("MaxAge"), o.MaxAge)
	}
	if o.MaxAge > 0 && o.MaxAge <= o.MinAge {
		bad("%s %v must be greater than %s %v", n("MaxAge"), o.MaxAge, n("MinAge"), o.MinAge)
	}
	if o.Period < 0 {
		bad("%s %v must not be negative", n("Period"), o.Period)
	}
	return errors.Join(errs...)
}

// Disabled: the policy never removes anything (the kubelet's switch).
func (o Options) Disabled() bool { return o.HighThresholdPercent == 100 && o.MaxAge == 0 }

// statfs is the filesystem's size as cAdvisor gives it to the kubelet:
// all blocks, and the blocks available to unprivileged users.
func statfs(path string) (FsStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return FsStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bsize := uint64(st.Bsize) // #nosec G115 -- a block size is positive
	return FsStats{Capacity: st.Blocks * bsize, Available: st.Bavail * bsize}, nil
}
