package status

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// Entry is a pod with the newest status generated for it.
type Entry struct {
	Pod    *corev1.Pod
	Status corev1.PodStatus
	// Generation numbers the pod's status: it grows, store-wide, with
	// every change of a status, so that a writer can tell which change a
	// status it read holds.
	Generation uint64
}

// Store keeps the newest status of every pod the agent runs, keyed by UID.
// It is safe for concurrent use; what it returns must be treated as
// read-only.
type Store struct {
	mu       sync.RWMutex
	onPhases []func(map[corev1.PodPhase]int)
	onChange []func(types.UID)
	pods     map[types.UID]Entry
	phases   map[corev1.PodPhase]int
	gen      uint64
}

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{pods: map[types.UID]Entry{}, phases: map[corev1.PodPhase]int{}}
}

// OnPhases subscribes f to the number of pods in each phase: it is called
// whenever those numbers change, with the store's lock held, so it must be
// quick and must not call the store. Subscribe before the first Set.
func (s *Store) OnPhases(f func(map[corev1.PodPhase]int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onPhases = append(s.onPhases, f)
}

// OnChange subscribes f to the pods whose status changed or was deleted:
// it is called, without the store's lock, after each such change.
// Subscribe before the first Set.
func (s *Store) OnChange(f func(types.UID)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = append(s.onChange, f)
}

// Set stores the pod's status and returns its Generation if the status
// changed, else 0.
func (s *Store) Set(pod *corev1.Pod, st corev1.PodStatus) uint64 {
	s.mu.Lock()
	old, had := s.pods[pod.UID]
	changed := !had || !equality.Semantic.DeepEqual(&old.Status, &st)
	gen := old.Generation
	if changed {
		s.gen++
		gen = s.gen
	}
	s.pods[pod.UID] = Entry{Pod: pod, Status: st, Generation: gen}
	if !had || old.Status.Phase != st.Phase {
		if had {
			s.phases[old.Status.Phase]--
		}
		s.phases[st.Phase]++
		s.reportLocked()
	}
	subs := s.onChange
	s.mu.Unlock()
	if !changed {
		return 0
	}
	for _, f := range subs {
		f(pod.UID)
	}
	return gen
}

// Get returns the pod's entry.
func (s *Store) Get(uid types.UID) (Entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.pods[uid]
	return e, ok
}

// Status returns the pod's status, or nil if it has none.
func (s *Store) Status(uid types.UID) *corev1.PodStatus {
	e, ok := s.Get(uid)
	if !ok {
		return nil
	}
	return &e.Status
}

// Delete forgets the pod.
func (s *Store) Delete(uid types.UID) {
	s.mu.Lock()
	old, ok := s.pods[uid]
	if ok {
		delete(s.pods, uid)
		s.phases[old.Status.Phase]--
		s.reportLocked()
	}
	subs := s.onChange
	s.mu.Unlock()
	if ok {
		for _, f := range subs {
			f(uid)
		}
	}
}

// List returns every entry, in no particular order.
func (s *Store) List() []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Entry, 0, len(s.pods))
	for _, e := range s.pods {
		out = append(out, e)
	}
	return out
}

func (s *Store) reportLocked() {
	if len(s.onPhases) == 0 {
		return
	}
	counts := make(map[corev1.PodPhase]int, len(s.phases))
	for p, n := range s.phases {
		counts[p] = n
	}
	for _, f := range s.onPhases {
		f(counts)
	}
}
