package checkpoint

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Mem is a Store in memory, for tests of the checkpoint's users. It keeps
// deep copies, so callers can no more change its records than a file's.
// Fail makes its writes fail, as a full or broken disk would.
type Mem struct {
	mu   sync.Mutex
	recs map[types.UID]PodRecord
	fail error
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty Mem.
func NewMem() *Mem {
	return &Mem{recs: map[types.UID]PodRecord{}}
}

// Fail makes every later Apply fail with err, changing nothing; nil makes
// them succeed again.
func (m *Mem) Fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// Apply implements Store.
func (m *Mem) Apply(changes []Change) error {
	if err := validateChanges(changes); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	for _, c := range changes {
		if c.Record == nil {
			delete(m.recs, c.UID)
			continue
		}
		m.recs[c.UID] = deepCopy(*c.Record)
	}
	return nil
}

// List implements Store.
func (m *Mem) List() ([]PodRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]PodRecord, 0, len(m.recs))
	for _, rec := range m.recs {
		out = append(out, deepCopy(rec))
	}
	slices.SortFunc(out, func(a, b PodRecord) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return out, nil
}

// Close implements Store.
func (m *Mem) Close() error { return nil }

func deepCopy(rec PodRecord) PodRecord {
	rec.Pod = rec.Pod.DeepCopy()
	rec.Final = rec.Final.DeepCopy()
	return rec
}
