package checkpoint

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Mem is a Store in memory, for tests of the checkpoint's users. It keeps
// deep copies, so callers can no more change its records than a file's.
type Mem struct {
	mu    sync.Mutex
	recs  map[types.UID]PodRecord
	clock clock.PassiveClock
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty Mem; a nil clock means the real one.
func NewMem(c clock.PassiveClock) *Mem {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Mem{recs: map[types.UID]PodRecord{}, clock: c}
}

// PutPod implements Store.
func (m *Mem) PutPod(rec PodRecord) error {
	if err := rec.validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var old *PodRecord
	if o, ok := m.recs[rec.UID]; ok {
		old = &o
	}
	rec = rec.inherit(old)
	rec.Pod = rec.Pod.DeepCopy()
	rec.Updated = m.clock.Now()
	m.recs[rec.UID] = rec
	return nil
}

// SetPhase implements Store.
func (m *Mem) SetPhase(uid types.UID, phase Phase, deadline time.Time) error {
	if !phase.valid() {
		return fmt.Errorf("%w: pod %s: unknown phase %q", ErrInvalidRecord, uid, phase)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.recs[uid]
	if !ok {
		return fmt.Errorf("pod %s: %w", uid, ErrNotFound)
	}
	rec.Phase, rec.Deadline, rec.Updated = phase, deadline, m.clock.Now()
	m.recs[uid] = rec
	return nil
}

// Delete implements Store.
func (m *Mem) Delete(uid types.UID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, uid)
	return nil
}

// List implements Store.
func (m *Mem) List() ([]PodRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PodRecord, 0, len(m.recs))
	for _, rec := range m.recs {
		rec.Pod = rec.Pod.DeepCopy()
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b PodRecord) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return out, nil
}

// Close implements Store.
func (m *Mem) Close() error { return nil }
