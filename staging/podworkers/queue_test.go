package podworkers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestWorkQueue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newWorkQueue()
	q.add("c", t0.Add(2*time.Second))
	q.add("b", t0.Add(time.Second))
	q.add("a", t0.Add(time.Second))
	q.add("d", t0.Add(time.Minute))
	q.add("d", t0.Add(3*time.Second)) // moved, not duplicated

	if got := q.popDue(t0); len(got) != 0 {
		t.Errorf("popDue(t0) = %v, want none", got)
	}
	if diff := cmp.Diff([]types.UID{"a", "b", "c"}, q.popDue(t0.Add(2*time.Second))); diff != "" {
		t.Errorf("popDue: earliest first, by UID among equals (-want +got):\n%s", diff)
	}
	if q.len() != 1 {
		t.Errorf("len = %d, want 1", q.len())
	}
	q.remove("d")
	q.remove("x")
	if got := q.popDue(t0.Add(time.Hour)); len(got) != 0 || q.len() != 0 {
		t.Errorf("after remove: popDue = %v, len = %d", got, q.len())
	}
}
