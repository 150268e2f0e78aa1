package status

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestStore(t *testing.T) {
	var reported []map[corev1.PodPhase]int
	s := NewStore()
	s.OnPhases(func(c map[corev1.PodPhase]int) { reported = append(reported, c) })
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "b"}}

	s.Set(a, corev1.PodStatus{Phase: corev1.PodPending})
	s.Set(b, corev1.PodStatus{Phase: corev1.PodPending})
	s.Set(a, corev1.PodStatus{Phase: corev1.PodRunning})
	s.Set(a, corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}) // same phase: no report
	s.Delete(b.UID)
	s.Delete("never")

	want := []map[corev1.PodPhase]int{
		{corev1.PodPending: 1},
		{corev1.PodPending: 2},
		{corev1.PodPending: 1, corev1.PodRunning: 1},
		{corev1.PodPending: 0, corev1.PodRunning: 1},
	}
	if diff := cmp.Diff(want, reported); diff != "" {
		t.Errorf("phase reports (-want +got):\n%s", diff)
	}
	if st := s.Status("a"); st == nil || st.PodIP != "10.0.0.1" {
		t.Errorf("Status(a) = %v", st)
	}
	if _, ok := s.Get("b"); ok {
		t.Error("b still stored after Delete")
	}
	if n := len(s.List()); n != 1 {
		t.Errorf("List has %d entries, want 1", n)
	}
}

func TestStoreConcurrentUse(t *testing.T) {
	s := NewStore()
	s.OnPhases(func(map[corev1.PodPhase]int) {})
	s.OnChange(func(types.UID) {})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(rune('a' + i))}}
			for range 100 {
				s.Set(pod, corev1.PodStatus{Phase: corev1.PodRunning})
				_ = s.List()
				s.Delete(pod.UID)
			}
		})
	}
	wg.Wait()
}

func TestStoreTellsOfChangesOnly(t *testing.T) {
	var changed []types.UID
	s := NewStore()
	s.OnChange(func(uid types.UID) { changed = append(changed, uid) })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	running := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	s.Set(pod, running)
	s.Set(pod, *running.DeepCopy()) // equal: nothing to tell
	ready := running.DeepCopy()
	ready.Conditions[0].Status = corev1.ConditionFalse
	s.Set(pod, *ready)
	s.Delete("a")
	s.Delete("a") // already gone
	if want := []types.UID{"a", "a", "a"}; !slices.Equal(changed, want) {
		t.Fatalf("onChange calls = %v, want %v (new, changed, deleted)", changed, want)
	}
}

func TestStoreGenerationGrowsWithChangesOnly(t *testing.T) {
	s := NewStore()
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "b"}}
	pending := corev1.PodStatus{Phase: corev1.PodPending}
	running := corev1.PodStatus{Phase: corev1.PodRunning}

	first := s.Set(a, pending)
	if first == 0 {
		t.Fatal("a new status got generation 0")
	}
	if g := s.Set(a, *pending.DeepCopy()); g != 0 {
		t.Errorf("an equal status got generation %d, want 0 (no change)", g)
	}
	if e, _ := s.Get("a"); e.Generation != first {
		t.Errorf("Get after an equal Set: generation %d, want %d kept", e.Generation, first)
	}
	other := s.Set(b, pending)
	second := s.Set(a, running)
	if !(first < other && other < second) {
		t.Errorf("generations %d, %d (another pod), %d: want them growing store-wide", first, other, second)
	}
	if e, _ := s.Get("a"); e.Generation != second {
		t.Errorf("Get: generation %d, want %d", e.Generation, second)
	}
}
