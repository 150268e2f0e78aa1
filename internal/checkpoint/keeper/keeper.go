package keeper

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Retry delays of a checkpoint write that failed: doubling, up to the max.
const (
	checkpointRetryMin = 100 * time.Millisecond
	checkpointRetryMax = 5 * time.Second
)

// Keeper keeps the checkpoint in step with the agent: a static pod is
// recorded when a source's pod is accepted, its phase when its
// termination starts and ends (with the final status of a pod that
// completed), and it is forgotten once terminated and no longer desired.
//
// Its callers change only its memory (recs), which says what the store
// must hold, and never wait for the disk: one writer goroutine (Run) writes
// every pod changed since its last write in one transaction, so a burst of
// changes costs one fsync and whatever the order of the changes, the
// newest state of each pod is what lands. A failed write is retried with
// a back-off, counted, and reported by Problem. Callers about to do
// something that the checkpoint must know of first (run a pod, remove the
// containers of a completed one) wait with durable for the pod's own
// changes to have been tried.
//
// A nil Keeper or store makes every method a no-op. Write errors never
// stop a pod: the checkpoint is memory for the next start.
type Keeper struct {
	store   checkpoint.Store
	clock   clock.WithTicker
	log     logr.Logger
	metrics *keeperMetrics

	// kick wakes the writer (capacity 1: one pending wake-up is enough).
	kick chan struct{}

	mu sync.Mutex
	// recs is what the store must hold: every checkpointed pod's record.
	recs map[types.UID]*checkpoint.PodRecord
	// dirty holds the generation of each pod's newest change not yet
	// written; gen counts changes. Changes up to tried have been tried
	// (written, or failed with lastErr); those up to writing are in the
	// write under way.
	dirty   map[types.UID]uint64
	gen     uint64
	tried   uint64
	writing uint64
	lastErr error
	// triedCh is closed (and replaced) after each write attempt.
	triedCh chan struct{}
	// restored are the pods brought back from the checkpoint at start.
	restored map[types.UID]bool
}

// Options configure a Keeper.
type Options struct {
	// Store is the checkpoint; nil keeps nothing.
	Store checkpoint.Store
	// Registry receives the keeper's metrics; nil registers none.
	Registry metrics.KubeRegistry
	Logger   logr.Logger
	Clock    clock.WithTicker
}

// New returns a Keeper of opts.Store; its writer runs once Run is called.
func New(opts Options) (*Keeper, error) {
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("checkpoint keeper metrics: %w", err)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Keeper{
		store: opts.Store, clock: opts.Clock, log: opts.Logger, metrics: m,
		kick:     make(chan struct{}, 1),
		recs:     map[types.UID]*checkpoint.PodRecord{},
		dirty:    map[types.UID]uint64{},
		triedCh:  make(chan struct{}),
		restored: map[types.UID]bool{},
	}, nil
}

func (c *Keeper) off() bool { return c == nil || c.store == nil }

// load reads the store into memory at start and returns its records.
func (c *Keeper) load() ([]checkpoint.PodRecord, error) {
	if c.off() {
		return nil, nil
	}
	recs, err := c.store.List()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range recs {
		rec := recs[i]
		c.recs[rec.UID] = &rec
	}
	return recs, err
}

// Accepted records a static pod as its source gave it; other pods (from
// the apiserver, mirror pods) are not checkpointed. A pod already recorded
// with the same hash keeps its record, and a changed one its phase: being
// sent again by its source does not revive a pod that is terminating or
// that completed.
func (c *Keeper) Accepted(pod *corev1.Pod) {
	if c.off() || podtypes.IsMirrorPod(pod) || !podtypes.IsStaticPod(pod) {
		return
	}
	src, _ := podtypes.PodSource(pod)
	hash := podtypes.ConfigHash(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.recs[pod.UID]
	if ok && old.Hash == hash {
		return
	}
	rec := &checkpoint.PodRecord{UID: pod.UID, Source: src, Origin: podtypes.ConfigOrigin(pod), Hash: hash, Pod: pod,
		Phase: checkpoint.Running, Updated: c.clock.Now()}
	if ok {
		rec.Phase, rec.Deadline, rec.Final = old.Phase, old.Deadline, old.Final
	}
	c.setLocked(rec)
}

// Running records that a checkpointed pod runs again (a pod removed and
// put back, started afresh).
func (c *Keeper) Running(uid types.UID) {
	c.change(uid, func(r *checkpoint.PodRecord) { r.Phase, r.Deadline, r.Final = checkpoint.Running, time.Time{}, nil })
}

// terminating records that the pod's termination starts now with the
// given grace period.
func (c *Keeper) terminating(uid types.UID, grace int64) {
	deadline := c.clock.Now().Add(time.Duration(grace) * time.Second)
	c.change(uid, func(r *checkpoint.PodRecord) { r.Phase, r.Deadline, r.Final = checkpoint.Terminating, deadline, nil })
}

// terminated records that none of the pod's containers runs any more.
func (c *Keeper) terminated(uid types.UID) {
	c.change(uid, func(r *checkpoint.PodRecord) { r.Phase, r.Deadline, r.Final = checkpoint.Terminated, time.Time{}, nil })
}

// completed records that the pod ran to its end while its source still
// lists it, and the status it ended with: it must never run again.
func (c *Keeper) completed(uid types.UID, final corev1.PodStatus) {
	c.change(uid, func(r *checkpoint.PodRecord) {
		r.Phase, r.Deadline, r.Final = checkpoint.Terminated, time.Time{}, final.DeepCopy()
	})
}

// FinalStatus returns the status a checkpointed pod completed with, or nil
// if it has not completed.
func (c *Keeper) FinalStatus(uid types.UID) *corev1.PodStatus {
	if c.off() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.recs[uid]; ok && r.Final != nil {
		return r.Final.DeepCopy()
	}
	return nil
}

func (c *Keeper) change(uid types.UID, f func(*checkpoint.PodRecord)) {
	if c.off() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.recs[uid]
	if !ok {
		return
	}
	rec := *old // never edit a record the writer may be encoding
	f(&rec)
	c.setLocked(&rec)
}

// forget removes a pod that is gone for good.
func (c *Keeper) forget(uid types.UID) {
	c.forgetIf(uid, func(types.UID) bool { return true })
}

// forgetIf removes the pod if gone(uid) holds, deciding under the lock that
// accepted takes: a pod put back by its source at the same moment is
// either seen as wanted here, or recorded again after.
func (c *Keeper) forgetIf(uid types.UID, gone func(types.UID) bool) {
	if c.off() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.recs[uid]; !ok || !gone(uid) {
		return
	}
	c.setLocked(&checkpoint.PodRecord{UID: uid})
	c.log.V(2).Info("Checkpoint: pod forgotten", "podUID", uid)
}

// ForgetCompleted forgets the pod if it completed: nothing of it is left
// to terminate.
func (c *Keeper) ForgetCompleted(uid types.UID) {
	if c.off() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.recs[uid]; ok && r.Final != nil {
		c.setLocked(&checkpoint.PodRecord{UID: uid})
	}
}

// Prune forgets every checkpointed pod nothing wants any more: a pod
// killed before its worker ever ran leaves no other trace to forget it by.
func (c *Keeper) Prune(wanted func(types.UID) bool) {
	if c.off() {
		return
	}
	c.mu.Lock()
	var gone []types.UID
	for uid := range c.recs {
		if !wanted(uid) {
			gone = append(gone, uid)
		}
	}
	c.mu.Unlock()
	for _, uid := range gone {
		c.forgetIf(uid, func(u types.UID) bool { return !wanted(u) })
	}
}

// setLocked makes rec what the store must hold for its UID; a record with
// no pod means none. It wakes the writer.
func (c *Keeper) setLocked(rec *checkpoint.PodRecord) {
	if rec.Pod == nil {
		delete(c.recs, rec.UID)
	} else {
		c.recs[rec.UID] = rec
	}
	c.gen++
	c.dirty[rec.UID] = c.gen
	c.metrics.pending.Set(float64(len(c.dirty)))
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run is the writer: it writes what changed whenever woken, retries a
// failed write after a back-off, and makes a last write when ctx ends.
func (c *Keeper) Run(ctx context.Context) error {
	if c.off() {
		return nil
	}
	var retry clock.Timer
	delay := time.Duration(0)
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			if retry != nil {
				retry.Stop()
			}
			_ = c.write() // write records its error (lastErr, metrics); nothing is left to retry it
			return nil
		case <-c.kick:
			if retry != nil {
				continue // the retry writes this change too
			}
		case <-retryC:
			retry = nil
		}
		if err := c.write(); err != nil {
			delay = min(max(2*delay, checkpointRetryMin), checkpointRetryMax)
			c.log.Error(err, "Checkpoint: write failed; retrying", "in", delay)
			retry = c.clock.NewTimer(delay)
			continue
		}
		delay = 0
	}
}

// write writes every pod changed since the last write in one transaction.
func (c *Keeper) write() error {
	c.mu.Lock()
	upTo := c.gen
	changes := make([]checkpoint.Change, 0, len(c.dirty))
	for uid := range c.dirty {
		ch := checkpoint.Change{UID: uid}
		if r, ok := c.recs[uid]; ok {
			rec := *r
			ch.Record = &rec
		}
		changes = append(changes, ch)
	}
	clear(c.dirty)
	c.writing = upTo
	c.mu.Unlock()

	var err error
	if len(changes) > 0 {
		slices.SortFunc(changes, func(a, b checkpoint.Change) int { return strings.Compare(string(a.UID), string(b.UID)) })
		err = c.store.Apply(changes)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		// Written again by the next attempt, as they are then.
		for _, ch := range changes {
			if _, newer := c.dirty[ch.UID]; !newer {
				c.dirty[ch.UID] = upTo
			}
		}
		c.metrics.failures.Inc()
	} else if len(changes) > 0 {
		c.metrics.writes.Inc()
	}
	c.lastErr = err
	c.tried = upTo
	c.metrics.pending.Set(float64(len(c.dirty)))
	close(c.triedCh)
	c.triedCh = make(chan struct{})
	return err
}

// durable waits until the pod's newest change has been tried by the
// writer, and returns the write's error. While writes are failing it does
// not wait: a pod must not stop for want of a disk.
func (c *Keeper) durable(ctx context.Context, uid types.UID) error {
	if c.off() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.lastErr != nil {
			return c.lastErr
		}
		g, pending := c.dirty[uid]
		if !pending {
			g = c.writing // the change may be in the write under way
		}
		if c.tried >= g {
			return nil
		}
		ch := c.triedCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			c.mu.Lock()
			return ctx.Err()
		}
		c.mu.Lock()
	}
}

// Problem describes a failing checkpoint, or returns nil.
func (c *Keeper) Problem() error {
	if c.off() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil {
		return nil
	}
	return fmt.Errorf("checkpoint: %d change(s) not written, retrying: %w", len(c.dirty), c.lastErr)
}

// markRestored notes that a pod was brought back from the checkpoint.
func (c *Keeper) markRestored(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restored[uid] = true
}

// WasRestored reports whether the pod was brought back from the
// checkpoint at start.
func (c *Keeper) WasRestored(uid types.UID) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restored[uid]
}
