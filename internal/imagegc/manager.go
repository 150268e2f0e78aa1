package imagegc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// The kubelet's event reasons, on the Node.
const (
	EventImageGCFailed       = "ImageGCFailed"
	EventFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	EventInvalidDiskCapacity = "InvalidDiskCapacity"
)

// ErrNotEnoughFreed: the images that could be removed were not enough to
// bring the image filesystem under the low threshold.
var ErrNotEnoughFreed = errors.New("not enough disk space freed")

// Manager tracks the runtime's images and removes those the policy
// allows. Run is its one loop; GarbageCollect is one pass of it.
type Manager struct {
	opts    Options
	log     logr.Logger
	metrics *gcMetrics
	statfs  func(string) (FsStats, error)

	mu sync.Mutex // one pass at a time; guards what follows
	// records are the images last listed, by ID.
	records map[string]*imageRecord
	// removals counts the images removed, so that a pass knows whether
	// it removed any (Options.AfterRemoval).
	removals int
	// started is when the Manager began watching: before MaxAge has
	// passed since, it cannot tell an image unused for MaxAge.
	started time.Time
}

// imageRecord is what the Manager knows of an image.
type imageRecord struct {
	firstDetected time.Time
	lastUsed      time.Time // zero: never seen in use
	size          uint64
	pinned        bool
}

// New checks the options; nothing is removed before Run or
// GarbageCollect.
func New(opts Options) (*Manager, error) {
	if opts.Period == 0 {
		opts.Period = DefaultPeriod
	}
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
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("image garbage collection metrics: %w", err)
	}
	fs := opts.Statfs
	if fs == nil {
		fs = statfs
	}
	return &Manager{opts: opts, log: opts.Logger.WithName("imagegc"), metrics: m, statfs: fs,
		records: map[string]*imageRecord{}, started: opts.Clock.Now()}, nil
}

// Run makes a pass at once and then every Period until ctx ends. A
// failed pass is logged; a second failure in a row is also an
// ImageGCFailed event. With the policy disabled, Run only waits.
func (m *Manager) Run(ctx context.Context) error {
	if m.opts.Disabled() {
		m.log.V(2).Info("Image garbage collection is off: the high threshold is 100% and there is no maximum age")
		<-ctx.Done()
		return nil
	}
	m.mu.Lock()
	m.started = m.opts.Clock.Now()
	m.mu.Unlock()
	t := m.opts.Clock.NewTicker(m.opts.Period)
	defer t.Stop()
	failedBefore := false
	for {
		err := m.GarbageCollect(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && failedBefore:
			m.log.Error(err, "Image garbage collection failed again")
			m.event(EventImageGCFailed, err.Error())
		case err != nil:
			m.log.Error(err, "Image garbage collection failed; it is tried again next period")
		case failedBefore:
			m.log.Info("Image garbage collection succeeded again")
		default:
			m.log.V(4).Info("Image garbage collection succeeded")
		}
		failedBefore = err != nil
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// GarbageCollect makes one pass: it updates what it knows of the images,
// removes those unused for longer than MaxAge, and, if the image
// filesystem has reached the high threshold, unused images least recently
// used first until their sizes add up to what brings it under the low
// threshold. It fails if the runtime or the filesystem cannot be read, a
// removal fails, or not enough could be freed (ErrNotEnoughFreed).
func (m *Manager) GarbageCollect(ctx context.Context) error {
	var err error
	m.pass(ctx, func() {
		err = m.collect(ctx)
		if err != nil && ctx.Err() == nil {
			m.metrics.failedPasses.Inc()
		}
	})
	return err
}

// FreeUnused removes every unused image old enough to remove, whatever
// the disk usage, as the kubelet's eviction manager asks before it evicts
// a pod for disk. It returns the bytes freed.
func (m *Manager) FreeUnused(ctx context.Context) (freed int64, err error) {
	m.pass(ctx, func() {
		now := m.opts.Clock.Now()
		var candidates []candidate
		if candidates, err = m.evictionOrder(ctx, now); err == nil {
			freed, err = m.freeSpace(ctx, math.MaxInt64, now, candidates)
		}
	})
	return freed, err
}

// pass runs one pass alone, then, if it removed an image,
// Options.AfterRemoval, outside the lock: it may take a while (a list of
// the runtime's images) and need not hold up the next pass.
func (m *Manager) pass(ctx context.Context, run func()) {
	removed := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		before := m.removals
		run()
		return m.removals - before
	}()
	if removed > 0 && m.opts.AfterRemoval != nil {
		m.opts.AfterRemoval(ctx)
	}
}

func (m *Manager) collect(ctx context.Context) error {
	now := m.opts.Clock.Now()
	candidates, err := m.evictionOrder(ctx, now)
	if err != nil {
		return err
	}
	if candidates, err = m.freeOld(ctx, candidates, now); err != nil {
		return err
	}

	fs, err := m.opts.Runtime.ImageFilesystem(ctx)
	if err != nil {
		return err
	}
	st, err := m.statfs(fs.Mountpoint)
	if err != nil {
		return fmt.Errorf("image filesystem: %w", err)
	}
	capacity, available := int64(min(st.Capacity, 1<<62)), int64(min(st.Available, st.Capacity, 1<<62)) // #nosec G115 -- bounded above
	if capacity == 0 {
		err := fmt.Errorf("invalid capacity 0 on the image filesystem at %s", fs.Mountpoint)
		m.event(EventInvalidDiskCapacity, err.Error())
		return err
	}
	usage := 100 - int(available*100/capacity)
	if usage < m.opts.HighThresholdPercent {
		m.log.V(4).Info("Image filesystem usage is under the high threshold", "usage", usage, "highThreshold", m.opts.HighThresholdPercent)
		return nil
	}
	toFree := capacity*int64(100-m.opts.LowThresholdPercent)/100 - available
	m.log.Info("Image filesystem usage has reached the high threshold; removing unused images down to the low threshold",
		"usage", usage, "highThreshold", m.opts.HighThresholdPercent, "lowThreshold", m.opts.LowThresholdPercent,
		"bytesToFree", toFree, "mountpoint", fs.Mountpoint, "runtimeUsedBytes", fs.UsedBytes)
	freed, err := m.freeSpace(ctx, toFree, now, candidates)
	if err != nil {
		return err
	}
	if freed < toFree {
		msg := fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %s used): "+
			"removing the unused images freed %d bytes of the %d needed to get under %d%%; "+
			"the rest is used by images in use or too young to remove, logs, volumes or other data",
			usage, resource.NewQuantity(capacity, resource.BinarySI), freed, toFree, m.opts.LowThresholdPercent)
		m.event(EventFreeDiskSpaceFailed, msg)
		return fmt.Errorf("%w: %s", ErrNotEnoughFreed, msg)
	}
	return nil
}

// event records a warning on the Node, or, standalone, logs it.
func (m *Manager) event(reason, message string) {
	if m.opts.Recorder == nil {
		m.log.Info("Image garbage collection warning", "reason", reason, "message", message)
		return
	}
	node := &corev1.ObjectReference{Kind: "Node", Name: m.opts.NodeName, UID: types.UID(m.opts.NodeName)}
	m.opts.Recorder.Event(node, corev1.EventTypeWarning, reason, message)
}
