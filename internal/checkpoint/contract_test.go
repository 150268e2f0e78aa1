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
	return PodRecord{UID: types.UID(uid), Source: podtypes.FileSource, Origin: "/etc/manifests/" + uid + ".yaml", Hash: uid, Pod: testPod(uid, "web-"+uid), Phase: Running, Updated: t0}
}

func put(s Store, rec PodRecord) error { return s.Apply([]Change{{UID: rec.UID, Record: &rec}}) }

func del(s Store, uid types.UID) error { return s.Apply([]Change{{UID: uid}}) }

// stores runs a test against every Store implementation: they must agree.
func stores(t *testing.T, test func(t *testing.T, s Store)) {
	t.Run("bolt", func(t *testing.T) {
		s, err := Open(filepath.Join(t.TempDir(), "checkpoint.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s)
	})
	t.Run("mem", func(t *testing.T) {
		test(t, NewMem())
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
	stores(t, func(t *testing.T, s Store) {
		if got := mustList(t, s); len(got) != 0 {
			t.Fatalf("new store lists %d records", len(got))
		}
		a, b := record("a"), record("b")
		if err := s.Apply([]Change{{UID: "b", Record: &b}, {UID: "a", Record: &a}}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]PodRecord{record("a"), record("b")}, mustList(t, s)); diff != "" {
			t.Fatalf("after put (-want +got):\n%s", diff)
		}

		// A record is replaced whole.
		deadline := t0.Add(time.Minute + 30*time.Second)
		a.Phase, a.Deadline = Terminating, deadline
		if err := put(s, a); err != nil {
			t.Fatal(err)
		}
		got := mustList(t, s)
		if got[0].Phase != Terminating || !got[0].Deadline.Equal(deadline) {
			t.Fatalf("record a = phase %s deadline %v; want terminating, %v", got[0].Phase, got[0].Deadline, deadline)
		}

		// A completed pod keeps its final status.
		final := &corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
		}}}
		b.Phase, b.Final = Terminated, final
		if err := put(s, b); err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, s)[1]; !cmp.Equal(got.Final, final) {
			t.Fatalf("final status of b: %s", cmp.Diff(final, got.Final))
		}

		// Deleted, put back and deleted again in one transaction: the
		// last change wins.
		if err := s.Apply([]Change{{UID: "a"}, {UID: "a", Record: &a}, {UID: "never-there"}, {UID: "b"}}); err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, s); len(got) != 1 || got[0].UID != "a" {
			t.Fatalf("after the batch: %+v, want only a", got)
		}
		if err := del(s, "a"); err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, s); len(got) != 0 {
			t.Fatalf("after delete: %+v", got)
		}
	})
}

func TestStoreRefusesBadInput(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		noUID := record("x")
		noUID.UID = ""
		noPod := record("y")
		noPod.Pod = nil
		badPhase := record("z")
		badPhase.Phase = "paused"
		noPhase := record("w")
		noPhase.Phase = ""
		finalWhileRunning := record("v")
		finalWhileRunning.Final = &corev1.PodStatus{Phase: corev1.PodSucceeded}
		for name, rec := range map[string]PodRecord{"no UID": noUID, "no pod": noPod, "bad phase": badPhase, "no phase": noPhase, "final while running": finalWhileRunning} {
			if err := put(s, rec); !errors.Is(err, ErrInvalidRecord) {
				t.Errorf("put(%s) = %v, want ErrInvalidRecord", name, err)
			}
		}
		other := record("b")
		if err := s.Apply([]Change{{UID: "a", Record: &other}}); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("a change whose UID is not its record's = %v, want ErrInvalidRecord", err)
		}
		// One bad change refuses the whole batch.
		good := record("good")
		if err := s.Apply([]Change{{UID: "good", Record: &good}, {UID: "z", Record: &badPhase}}); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("a batch with a bad record = %v, want ErrInvalidRecord", err)
		}
		if got := mustList(t, s); len(got) != 0 {
			t.Errorf("refused input changed the store: %+v", got)
		}
	})
}

// The store hands out copies: a caller editing a listed pod changes nothing.
func TestStoreIsolatesCallers(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		rec := record("a")
		if err := put(s, rec); err != nil {
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
	stores(t, func(t *testing.T, s Store) {
		const writers, perWriter = 4, 25
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					uid := fmt.Sprintf("w%d-%02d", w, i)
					rec := record(uid)
					if err := put(s, rec); err != nil {
						t.Error(err)
						return
					}
					if i%2 == 0 {
						rec.Phase = Terminating
						if err := put(s, rec); err != nil {
							t.Error(err)
						}
					}
					if i%5 == 0 {
						if err := del(s, types.UID(uid)); err != nil {
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
