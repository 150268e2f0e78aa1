package containergc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultInterval is the period of the collections.
const DefaultInterval = time.Minute

// ErrInvalidOptions is returned by New for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid container GC options")

// Runtime removes the dead containers and sandboxes; *runtime.Runtime
// satisfies it.
type Runtime interface {
	GarbageCollect(ctx context.Context, deleted func(types.UID) bool) error
}

// Options configure a Collector. Runtime, SourcesReady and Gone are
// required.
type Options struct {
	Runtime Runtime
	// Interval is the period of the collections (default DefaultInterval).
	Interval time.Duration
	// SourcesReady reports whether every source has delivered its pods.
	SourcesReady func() bool
	// Gone reports whether a pod is neither desired nor possibly running.
	Gone   func(types.UID) bool
	Logger logr.Logger
	Clock  clock.WithTicker
}

// Collector collects on its period (Run) and when asked (Collect).
type Collector struct {
	opts Options
	// mu makes one pass at a time.
	mu sync.Mutex
}

// New builds a Collector; Run runs it.
func New(opts Options) (*Collector, error) {
	var errs []error
	for name, missing := range map[string]bool{"Runtime": opts.Runtime == nil, "SourcesReady": opts.SourcesReady == nil, "Gone": opts.Gone == nil} {
		if missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidOptions, name))
		}
	}
	if opts.Interval < 0 {
		errs = append(errs, fmt.Errorf("%w: Interval is negative (%v)", ErrInvalidOptions, opts.Interval))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Collector{opts: opts}, nil
}

// Run collects each Interval until ctx ends, then returns nil.
func (c *Collector) Run(ctx context.Context) error {
	t := c.opts.Clock.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			c.Collect(ctx)
		}
	}
}

// Collect makes one collection now, after the one under way if any.
func (c *Collector) Collect(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Until every source has spoken, any pod may still be wanted.
	ready := c.opts.SourcesReady()
	deleted := func(uid types.UID) bool { return ready && c.opts.Gone(uid) }
	if err := c.opts.Runtime.GarbageCollect(ctx, deleted); err != nil && ctx.Err() == nil {
		c.opts.Logger.Error(err, "Garbage collection failed")
	}
}
