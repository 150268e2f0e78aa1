package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testPod(uid, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "default",
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: "file", podtypes.ConfigHashAnnotationKey: uid}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "localhost/nodeagent/busybox:1.35.0"}}},
	}
}

func record(uid string) PodRecord {
	return PodRecord{UID: types.UID(uid), Source: podtypes.FileSource, Origin: "/etc/manifests/" + uid + ".yaml", Hash: uid, Pod: testPod(uid, "web-"+uid)}
}

// stores runs a test against every Store implementation: they must agree.
func stores(t *testing.T, test func(t *testing.T, s Store, clk *clocktesting.FakePassiveClock)) {
	t.Run("bolt", func(t *testing.T) {
		clk := clocktesting.NewFakePassiveClock(t0)
		s, err := Open(filepath.Join(t.TempDir(), "checkpoint.db"), Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s, clk)
	})
	t.Run("mem", func(t *testing.T) {
		clk := clocktesting.NewFakePassiveClock(t0)
		test(t, NewMem(clk), clk)
	})
}

func mustList(t *testing.T, s Store) []PodRecord {
	t.Helper()
	recs, err := s.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs
}

func TestStoreLifecycle(t *testing.T) {
	stores(t, func(t *testing.T, s Store, clk *clocktesting.FakePassiveClock) {
		if got := mustList(t, s); len(got) != 0 {
			t.Fatalf("new store lists %d records", len(got))
		}
		for _, uid := range []string{"b", "a"} {
			if err := s.PutPod(record(uid)); err != nil {
				t.Fatal(err)
			}
		}
		want := []PodRecord{record("a"), record("b")}
		for i := range want {
			want[i].Phase, want[i].Updated = Running, t0
		}
		if diff := cmp.Diff(want, mustList(t, s)); diff != "" {
			t.Fatalf("after put (-want +got):\n%s", diff)
		}

		clk.SetTime(t0.Add(time.Minute))
		deadline := t0.Add(time.Minute + 30*time.Second)
		if err := s.SetPhase("a", Terminating, deadline); err != nil {
			t.Fatal(err)
		}
		// The source sends the same pod again while it terminates: the
		// termination must not be undone.
		if err := s.PutPod(record("a")); err != nil {
			t.Fatal(err)
		}
		got := mustList(t, s)
		if got[0].Phase != Terminating || !got[0].Deadline.Equal(deadline) || !got[0].Updated.Equal(t0.Add(time.Minute)) {
			t.Fatalf("record a = phase %s deadline %v updated %v; want terminating, %v, %v", got[0].Phase, got[0].Deadline, got[0].Updated, deadline, t0.Add(time.Minute))
		}

		if err := s.SetPhase("a", Terminated, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("a"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("never-there"); err != nil {
			t.Errorf("Delete of an unknown UID: %v", err)
		}
		if got := mustList(t, s); len(got) != 1 || got[0].UID != "b" {
			t.Fatalf("after delete: %+v, want only b", got)
		}
	})
}

func TestStoreRefusesBadInput(t *testing.T) {
	stores(t, func(t *testing.T, s Store, _ *clocktesting.FakePassiveClock) {
		noUID := record("x")
		noUID.UID = ""
		noPod := record("y")
		noPod.Pod = nil
		badPhase := record("z")
		badPhase.Phase = "paused"
		for name, rec := range map[string]PodRecord{"no UID": noUID, "no pod": noPod, "bad phase": badPhase} {
			if err := s.PutPod(rec); !errors.Is(err, ErrInvalidRecord) {
				t.Errorf("PutPod(%s) = %v, want ErrInvalidRecord", name, err)
			}
		}
		if err := s.SetPhase("nope", Running, time.Time{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetPhase of an unknown UID = %v, want ErrNotFound", err)
		}
		if err := s.PutPod(record("a")); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPhase("a", "paused", time.Time{}); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("SetPhase(paused) = %v, want ErrInvalidRecord", err)
		}
		if got := mustList(t, s); len(got) != 1 || got[0].Phase != Running {
			t.Errorf("refused input changed the store: %+v", got)
		}
	})
}

// The store hands out copies: a caller editing a listed pod changes nothing.
func TestStoreIsolatesCallers(t *testing.T) {
	stores(t, func(t *testing.T, s Store, _ *clocktesting.FakePassiveClock) {
		rec := record("a")
		if err := s.PutPod(rec); err != nil {
			t.Fatal(err)
		}
		rec.Pod.Spec.Containers[0].Image = "changed-after-put"
		got := mustList(t, s)
		got[0].Pod.Spec.Containers[0].Image = "changed-after-list"
		if img := mustList(t, s)[0].Pod.Spec.Containers[0].Image; img != "localhost/nodeagent/busybox:1.35.0" {
			t.Errorf("stored image = %q; the store shares memory with its callers", img)
		}
	})
}

func TestStoreConcurrentUse(t *testing.T) {
	stores(t, func(t *testing.T, s Store, _ *clocktesting.FakePassiveClock) {
		const writers, perWriter = 4, 25
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					uid := fmt.Sprintf("w%d-%02d", w, i)
					if err := s.PutPod(record(uid)); err != nil {
						t.Error(err)
						return
					}
					if i%2 == 0 {
						if err := s.SetPhase(types.UID(uid), Terminating, t0); err != nil {
							t.Error(err)
						}
					}
					if i%5 == 0 {
						if err := s.Delete(types.UID(uid)); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
		wg.Go(func() {
			for range 50 {
				if _, err := s.List(); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
		got := mustList(t, s)
		// Per writer: 25 put, 5 deleted (i%5==0); of the 20 left, those with
		// an even i are terminating.
		if len(got) != writers*20 {
			t.Fatalf("%d records, want %d", len(got), writers*20)
		}
		terminating := 0
		for _, r := range got {
			if r.Phase == Terminating {
				terminating++
			}
		}
		if terminating != writers*10 {
			t.Errorf("%d terminating, want %d", terminating, writers*10)
		}
	})
}
