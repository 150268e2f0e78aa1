package timeline

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func messages(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Kind+": "+e.Message)
	}
	return out
}

func TestLog(t *testing.T) {
	tests := []struct {
		name    string
		perPod  int
		records int
		want    []string
	}{
		{name: "none", perPod: 3, records: 0, want: nil},
		{name: "under the bound", perPod: 3, records: 2, want: []string{"seen: #0", "seen: #1"}},
		{name: "at the bound", perPod: 3, records: 3, want: []string{"seen: #0", "seen: #1", "seen: #2"}},
		{name: "oldest dropped first", perPod: 3, records: 5, want: []string{"seen: #2", "seen: #3", "seen: #4"}},
		{name: "wrapped twice", perPod: 2, records: 7, want: []string{"seen: #5", "seen: #6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(tt.perPod)
			for i := range tt.records {
				l.Record("a", KindSeen, "#%d", i)
			}
			l.Record("b", KindError, "other pod")
			if diff := cmp.Diff(tt.want, messages(l.Get("a"))); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetReturnsACopyStampedByTheClock(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := clocktesting.NewFakePassiveClock(start)
	l := NewWithClock(2, c)
	l.Record("a", KindWorker, "sync")
	c.SetTime(start.Add(time.Second))
	l.Record("a", KindRuntime, "StartContainer %q", "main")

	got := l.Get("a")
	want := []Entry{
		{Time: start, Kind: KindWorker, Message: "sync"},
		{Time: start.Add(time.Second), Kind: KindRuntime, Message: `StartContainer "main"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Get (-want +got):\n%s", diff)
	}
	got[0].Message = "changed"
	if l.Get("a")[0].Message != "sync" {
		t.Error("changing what Get returned changed the log")
	}
}

func TestForget(t *testing.T) {
	l := New(0)
	l.Record("a", KindSeen, "x")
	l.Forget("a")
	l.Forget("never-seen")
	if got := l.Get("a"); got != nil {
		t.Errorf("Get after Forget = %v, want nil", got)
	}
	if l.Len() != 0 {
		t.Errorf("Len = %d, want 0", l.Len())
	}
}

func TestNilLogIsInert(t *testing.T) {
	var l *Log
	l.Record("a", KindSeen, "x")
	l.Forget("a")
	if l.Get("a") != nil {
		t.Error("nil Log returned entries")
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New(10)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			uid := types.UID(fmt.Sprint("pod-", w%2))
			for i := range 200 {
				l.Record(uid, KindRuntime, "%d", i)
				_ = l.Get(uid)
				if i%50 == 0 {
					l.Forget(uid)
				}
			}
		})
	}
	wg.Wait()
	for _, uid := range []types.UID{"pod-0", "pod-1"} {
		if n := len(l.Get(uid)); n > 10 {
			t.Errorf("%s holds %d entries, bound is 10", uid, n)
		}
	}
}

func TestPrune(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := clocktesting.NewFakePassiveClock(start)
	l := NewWithClock(2, c)
	l.Record("old", KindSeen, "x")
	l.Record("kept", KindSeen, "x")
	l.Record("wrapped", KindSeen, "1")
	c.SetTime(start.Add(time.Minute))
	l.Record("wrapped", KindSeen, "2")
	l.Record("wrapped", KindSeen, "3") // wraps: newest is at index 0
	l.Record("new", KindSeen, "x")

	n := l.Prune(start.Add(time.Second), func(uid types.UID) bool { return uid == "kept" })
	if n != 1 {
		t.Errorf("Prune forgot %d pods, want 1", n)
	}
	for uid, want := range map[types.UID]bool{"old": false, "kept": true, "wrapped": true, "new": true} {
		if got := l.Get(uid) != nil; got != want {
			t.Errorf("%s kept = %v, want %v", uid, got, want)
		}
	}
}
