package checkpointtest_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/checkpoint/checkpointtest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func writeStore(t *testing.T, path string, uids ...string) {
	t.Helper()
	s, err := checkpoint.Open(path, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, uid := range uids {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID("uid-" + uid)}}
		rec := checkpoint.PodRecord{UID: pod.UID, Source: podtypes.FileSource, Hash: "h-" + uid, Pod: pod, Phase: checkpoint.Running}
		if err := s.Apply([]checkpoint.Change{{UID: pod.UID, Record: &rec}}); err != nil {
			t.Fatal(err)
		}
	}
}

func list(t *testing.T, path string) ([]checkpoint.PodRecord, error) {
	t.Helper()
	s, err := checkpoint.Open(path, checkpoint.Options{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.List()
}

// A file stamped newer is refused by this build, keeping its pods: stamped
// back, it opens with the same records.
func TestSetSchemaNewerIsRefusedAndKeepsThePods(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	writeStore(t, path, "a", "b")
	want, err := list(t, path)
	if err != nil || len(want) != 2 {
		t.Fatalf("fixture: %v, %v", want, err)
	}

	newer := checkpoint.SchemaVersion() + 1
	if err := checkpointtest.SetSchema(path, newer); err != nil {
		t.Fatal(err)
	}
	_, err = list(t, path)
	if !errors.Is(err, checkpoint.ErrNewerSchema) {
		t.Fatalf("Open of a file stamped %d: %v, want ErrNewerSchema", newer, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(newer)) {
		t.Errorf("the refusal %q does not name the file's schema %d", err, newer)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after SetSchema: %v, %v; want the file kept with mode 0600", fi, err)
	}

	if err := checkpointtest.SetSchema(path, checkpoint.SchemaVersion()); err != nil {
		t.Fatal(err)
	}
	got, err := list(t, path)
	if err != nil {
		t.Fatalf("Open after stamping the current schema back: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i].UID != want[i].UID || got[i].Hash != want[i].Hash || !got[i].Updated.Equal(want[i].Updated) {
			t.Errorf("record %d: %+v, want %+v unchanged", i, got[i], want[i])
		}
	}
}

func TestSetSchemaNeedsAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	if err := checkpointtest.SetSchema(path, 7); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SetSchema of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SetSchema created the missing file: %v", err)
	}
}

// A file the agent holds open is not written under it.
func TestSetSchemaRefusesAHeldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	s, err := checkpoint.Open(path, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := checkpointtest.SetSchema(path, checkpoint.SchemaVersion()+1); err == nil {
		t.Fatal("SetSchema stamped a file held open by a store")
	}
}
