package logrotation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Runtime is what rotation needs of the container runtime;
// *runtime.Runtime satisfies it.
type Runtime interface {
	RunningContainers(ctx context.Context) ([]string, error)
	ContainerLogPath(ctx context.Context, id string) (string, error)
	ReopenContainerLog(ctx context.Context, id string) error
}

// The defaults and bounds of Options, the kubelet's.
const (
	DefaultMaxSize   = 10 << 20
	DefaultMaxFiles  = 5
	DefaultWorkers   = 1
	DefaultInterval  = 10 * time.Second
	MinInterval      = 3 * time.Second
	MinMaxFiles      = 2
	timestampLayout  = "20060102-150405"
	compressedSuffix = ".gz"
	inProgressSuffix = ".tmp"
)

// Options configure a Rotator.
type Options struct {
	Runtime Runtime
	// MaxSize is the size in bytes at which a log file is rotated.
	MaxSize int64
	// MaxFiles is how many log files a container keeps, the current one
	// included; at least MinMaxFiles.
	MaxFiles int
	// Workers is how many containers are rotated at once.
	Workers int
	// Interval is how often the log files are checked; at least
	// MinInterval.
	Interval time.Duration
	Clock    clock.WithTicker
	Logger   logr.Logger
}

// ErrInvalidOptions is wrapped by the error of New and Validate for
// Options that cannot work.
var ErrInvalidOptions = errors.New("invalid container log rotation options")

// Validate reports every option that cannot work at once, each wrapping
// ErrInvalidOptions. names, if not nil,
// says what to call each field in the errors (the command gives its
// flags' names); a field it lacks keeps its own name.
func (o Options) Validate(names map[string]string) error {
	n := func(field string) string {
		if name, ok := names[field]; ok {
			return name
		}
		return field
	}
	var errs []error
	if o.MaxSize <= 0 {
		errs = append(errs, fmt.Errorf("%w: %s must be positive, not %d", ErrInvalidOptions, n("MaxSize"), o.MaxSize))
	}
	if o.MaxFiles < MinMaxFiles {
		errs = append(errs, fmt.Errorf("%w: %s must be at least %d (the current file and one rotated), not %d", ErrInvalidOptions, n("MaxFiles"), MinMaxFiles, o.MaxFiles))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("%w: %s must be at least 1, not %d", ErrInvalidOptions, n("Workers"), o.Workers))
	}
	if o.Interval < MinInterval {
		errs = append(errs, fmt.Errorf("%w: %s must be at least %v, not %v", ErrInvalidOptions, n("Interval"), MinInterval, o.Interval))
	}
	return errors.Join(errs...)
}

// Rotator rotates the running containers' log files.
type Rotator struct {
	opts Options
	log  logr.Logger
	// paths caches each running container's log path: it never changes.
	paths map[string]string
}

// New checks the options; nothing is rotated before Run.
func New(opts Options) (*Rotator, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	var missing error
	if opts.Runtime == nil {
		missing = fmt.Errorf("%w: Runtime is required", ErrInvalidOptions)
	}
	if err := errors.Join(missing, opts.Validate(nil)); err != nil {
		return nil, err
	}
	return &Rotator{opts: opts, log: opts.Logger.WithName("logrotation"), paths: map[string]string{}}, nil
}

// Run checks the log files every interval until ctx ends.
func (r *Rotator) Run(ctx context.Context) error {
	t := r.opts.Clock.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			r.check(ctx)
		}
	}
}

// check rotates every running container's log that has reached MaxSize,
// Workers at a time.
func (r *Rotator) check(ctx context.Context) {
	due, err := r.due(ctx)
	if err != nil {
		r.log.Error(err, "Checking the container logs failed")
		return
	}
	work := make(chan containerLog)
	var wg sync.WaitGroup
	for range min(r.opts.Workers, len(due)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				if err := r.rotate(ctx, c.id, c.path); err != nil {
					r.log.Error(err, "Rotating a container log failed", "containerID", c.id, "path", c.path)
				}
			}
		}()
	}
	for _, c := range due {
		work <- c
	}
	close(work)
	wg.Wait()
}

type containerLog struct{ id, path string }

// due lists the running containers whose log files have reached MaxSize,
// and keeps the cache of paths to the running containers.
func (r *Rotator) due(ctx context.Context) ([]containerLog, error) {
	ids, err := r.opts.Runtime.RunningContainers(ctx)
	if err != nil {
		return nil, err
	}
	running := make(map[string]bool, len(ids))
	var due []containerLog
	for _, id := range ids {
		running[id] = true
		path, ok := r.paths[id]
		if !ok {
			if path, err = r.opts.Runtime.ContainerLogPath(ctx, id); err != nil {
				r.log.V(2).Info("No log path yet", "containerID", id, "err", err.Error())
				continue
			}
			r.paths[id] = path
		}
		if path == "" {
			continue
		}
		if fi, err := os.Stat(path); err == nil && fi.Size() >= r.opts.MaxSize {
			due = append(due, containerLog{id: id, path: path})
		}
	}
	for id := range r.paths {
		if !running[id] {
			delete(r.paths, id)
		}
	}
	return due, nil
}
