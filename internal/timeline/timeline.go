package timeline

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// The kinds of entries the agent records.
const (
	// KindSeen: a config update about the pod arrived.
	KindSeen = "seen"
	// KindWorker: the pod's worker entered another phase.
	KindWorker = "worker"
	// KindRuntime: a runtime action was taken for the pod.
	KindRuntime = "runtime"
	// KindError: a sync of the pod failed.
	KindError = "error"
	// KindProbe: a probe's result changed.
	KindProbe = "probe"
)

// DefaultPerPod is the bound New uses for a non-positive perPod.
const DefaultPerPod = 100

// Entry is one event in a pod's timeline.
type Entry struct {
	Time    time.Time
	Kind    string
	Message string
}

// Log is a bounded per-pod event log.
type Log struct {
	perPod int
	clock  clock.PassiveClock

	mu   sync.Mutex
	pods map[types.UID]*ring
}

// ring holds a pod's newest entries; next is where the next one goes once
// the ring is full.
type ring struct {
	entries []Entry
	next    int
}

// New returns a Log that keeps at most perPod entries per pod
// (DefaultPerPod if perPod is not positive), stamped by the real clock.
func New(perPod int) *Log {
	return NewWithClock(perPod, clock.RealClock{})
}

// NewWithClock is New with an injected clock, for tests.
func NewWithClock(perPod int, c clock.PassiveClock) *Log {
	if perPod <= 0 {
		perPod = DefaultPerPod
	}
	return &Log{perPod: perPod, clock: c, pods: map[types.UID]*ring{}}
}

// Record appends an entry to the pod's timeline; format and args are as
// for fmt.Sprintf. A nil Log records nothing.
func (l *Log) Record(uid types.UID, kind, format string, args ...any) {
	if l == nil {
		return
	}
	e := Entry{Time: l.clock.Now(), Kind: kind, Message: fmt.Sprintf(format, args...)}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.pods[uid]
	if !ok {
		r = &ring{}
		l.pods[uid] = r
	}
	if len(r.entries) < l.perPod {
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.next] = e
	r.next = (r.next + 1) % l.perPod
}

// Get returns a copy of the pod's timeline, oldest first; nil if the pod
// has none.
func (l *Log) Get(uid types.UID) []Entry {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.pods[uid]
	if !ok {
		return nil
	}
	out := make([]Entry, 0, len(r.entries))
	out = append(out, r.entries[r.next:]...)
	return append(out, r.entries[:r.next]...)
}

// Forget drops the pod's timeline.
func (l *Log) Forget(uid types.UID) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pods, uid)
}

// Prune forgets the timeline of every pod whose newest entry is older than
// before, unless keep reports the pod is still wanted, and returns how many
// it forgot. keep is called without the log's lock held.
func (l *Log) Prune(before time.Time, keep func(types.UID) bool) int {
	l.mu.Lock()
	var stale []types.UID
	for uid, r := range l.pods {
		newest := r.entries[(r.next+len(r.entries)-1)%len(r.entries)]
		if newest.Time.Before(before) {
			stale = append(stale, uid)
		}
	}
	l.mu.Unlock()
	n := 0
	for _, uid := range stale {
		if keep != nil && keep(uid) {
			continue
		}
		l.Forget(uid)
		n++
	}
	return n
}

// Len returns how many pods have a timeline.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pods)
}

// ShortID is a container or sandbox ID as entries show it: its first 13
// characters.
func ShortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}
