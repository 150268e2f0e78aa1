package podworkers

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// workQueue holds, for each pod, when the agent should sync it next. A pod
// is in it at most once; enqueueing it again moves its time. Not safe for
// concurrent use; the shell holds its lock.
type workQueue struct {
	due map[types.UID]time.Time
}

func newWorkQueue() workQueue {
	return workQueue{due: map[types.UID]time.Time{}}
}

func (q *workQueue) add(uid types.UID, at time.Time) { q.due[uid] = at }

func (q *workQueue) remove(uid types.UID) { delete(q.due, uid) }

func (q *workQueue) len() int { return len(q.due) }

// popDue removes and returns the pods due at or before now, earliest first
// (by UID among equals, so that the order is reproducible).
func (q *workQueue) popDue(now time.Time) []types.UID {
	var due []types.UID
	for uid, at := range q.due {
		if !at.After(now) {
			due = append(due, uid)
		}
	}
	slices.SortFunc(due, func(a, b types.UID) int {
		if c := q.due[a].Compare(q.due[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, uid := range due {
		delete(q.due, uid)
	}
	return due
}

// entry is one queued pod, for inspection.
type entry struct {
	uid types.UID
	at  time.Time
}

// entries returns the queue ordered like popDue.
func (q *workQueue) entries() []entry {
	out := make([]entry, 0, len(q.due))
	for uid, at := range q.due {
		out = append(out, entry{uid, at})
	}
	slices.SortFunc(out, func(a, b entry) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.uid, b.uid)
	})
	return out
}
