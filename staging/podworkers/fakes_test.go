package podworkers

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// callResult is what a held Syncer call returns when released.
type callResult struct {
	terminal bool
	err      error
}

func (r callResult) String() string {
	switch {
	case r.err != nil:
		return "error: " + r.err.Error()
	case r.terminal:
		return "terminal"
	}
	return "ok"
}

// heldCall is a Syncer call waiting for the test to release it.
type heldCall struct {
	ctx context.Context
	res chan callResult
}

// logLine is one thing the fake Syncer saw, for one pod.
type logLine struct {
	uid  types.UID
	text string
}

// holdingSyncer records every call and holds it until the test releases it
// or its context is cancelled, so that a test decides when each call ends.
type holdingSyncer struct {
	mu   sync.Mutex
	log  []logLine
	held map[types.UID]*heldCall
}

func newHoldingSyncer() *holdingSyncer {
	return &holdingSyncer{held: map[types.UID]*heldCall{}}
}

func (s *holdingSyncer) hold(ctx context.Context, uid types.UID, method, detail string) callResult {
	c := &heldCall{ctx: ctx, res: make(chan callResult, 1)}
	s.mu.Lock()
	if s.held[uid] != nil {
		s.log = append(s.log, logLine{uid, "BUG: two calls at once"})
	}
	s.held[uid] = c
	s.log = append(s.log, logLine{uid, method + " " + detail})
	s.mu.Unlock()

	var r callResult
	select {
	case r = <-c.res:
	case <-ctx.Done():
		r = callResult{err: ctx.Err()}
	}
	s.mu.Lock()
	if s.held[uid] == c {
		delete(s.held, uid)
	}
	text := method + " -> " + r.String()
	if r.err == context.Canceled {
		text = method + " -> canceled"
	}
	s.log = append(s.log, logLine{uid, text})
	s.mu.Unlock()
	return r
}

// heldLive reports whether uid has a held call that nothing has cancelled:
// one that will not return until the test releases it.
func (s *holdingSyncer) heldLive(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.held[uid]
	return c != nil && c.ctx.Err() == nil
}

// liveUIDs returns the pods with a live held call, sorted.
func (s *holdingSyncer) liveUIDs() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []types.UID
	for uid, c := range s.held {
		if c.ctx.Err() == nil {
			out = append(out, uid)
		}
	}
	slices.Sort(out)
	return out
}

func (s *holdingSyncer) release(uid types.UID, r callResult) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.held[uid]
	if c == nil {
		return false
	}
	delete(s.held, uid)
	c.res <- r
	return true
}

// take returns the log since the last take, grouped by pod in UID order;
// each pod's lines keep their order. Lines of different pods logged in one
// step are concurrent, so no order between them would be reproducible.
func (s *holdingSyncer) take() []string {
	s.mu.Lock()
	lines := s.log
	s.log = nil
	s.mu.Unlock()
	slices.SortStableFunc(lines, func(a, b logLine) int { return cmp.Compare(a.uid, b.uid) })
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l.uid) + ": " + l.text
	}
	return out
}

func (s *holdingSyncer) SyncPod(ctx context.Context, t UpdateType, pod *corev1.Pod) (bool, error) {
	detail := fmt.Sprintf("%v v=%s", t, pod.ResourceVersion)
	r := s.hold(ctx, pod.UID, "SyncPod", detail)
	return r.terminal, r.err
}

func (s *holdingSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, grace int64, statusFn func(*corev1.PodStatus)) error {
	var st corev1.PodStatus
	statusFn(&st)
	detail := fmt.Sprintf("grace=%d v=%s", grace, pod.ResourceVersion)
	if st.Reason != "" {
		detail += " reason=" + st.Reason
	}
	return s.hold(ctx, pod.UID, "SyncTerminatingPod", detail).err
}

func (s *holdingSyncer) SyncTerminatingRuntimePod(ctx context.Context, pod RuntimePod) error {
	return s.hold(ctx, pod.UID, "SyncTerminatingRuntimePod", pod.Namespace+"/"+pod.Name).err
}

func (s *holdingSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	return s.hold(ctx, pod.UID, "SyncTerminatedPod", "v="+pod.ResourceVersion).err
}

// recordingMetrics keeps the latest gauges and every sync observation.
type recordingMetrics struct {
	mu     sync.Mutex
	phases PhaseCounts
	depth  int
	syncs  []observation
}

type observation struct {
	work Work
	d    time.Duration
}

func (m *recordingMetrics) WorkerPhases(c PhaseCounts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phases = c
}

func (m *recordingMetrics) ObserveSync(w Work, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.syncs = append(m.syncs, observation{w, d})
}

func (m *recordingMetrics) QueueDepth(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.depth = n
}

func (m *recordingMetrics) snapshot() (PhaseCounts, int, []observation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phases, m.depth, slices.Clone(m.syncs)
}
