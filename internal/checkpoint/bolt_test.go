package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	bolt "go.etcd.io/bbolt"
	clocktesting "k8s.io/utils/clock/testing"
)

func openAt(t *testing.T, path string, opts Options) *Bolt {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBoltPersistsAcrossReopenWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "checkpoint.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := put(s, record("a")); err != nil {
		t.Fatal(err)
	}
	terminating := record("a")
	terminating.Phase, terminating.Deadline = Terminating, t0
	if err := put(s, terminating); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("file mode %o, want 600", mode)
	}
	got := mustList(t, openAt(t, path, Options{}))
	if len(got) != 1 || got[0].Phase != Terminating || !got[0].Deadline.Equal(t0) || got[0].Pod.Spec.Containers[0].Name != "main" {
		t.Fatalf("after reopen: %+v", got)
	}
}

func TestBoltTightensModeOfExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	openAt(t, path, Options{}).Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	openAt(t, path, Options{})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o after reopen, want 600", fi.Mode().Perm())
	}
}

func readSchema(t *testing.T, path string) uint32 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v uint32
	if err := db.View(func(tx *bolt.Tx) (err error) { v, err = fileSchema(tx); return err }); err != nil {
		t.Fatal(err)
	}
	return v
}

// writeRaw builds a bolt file by hand, as an older or newer agent left it.
func writeRaw(t *testing.T, path string, fill func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fill); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestBoltNewFileGetsCurrentSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	openAt(t, path, Options{}).Close()
	if v := readSchema(t, path); v != schemaVersion || v != 1 {
		t.Fatalf("schema %d, want %d (= 1)", v, schemaVersion)
	}
}

// A schema-0 file that already holds pods (as from a build that wrote the
// pods bucket before versioning) is migrated, keeping its records.
func TestBoltMigratesOlderFileKeepingRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	writeRaw(t, path, func(tx *bolt.Tx) error {
		pods, err := tx.CreateBucket(bucketPods)
		if err != nil {
			return err
		}
		data, err := json.Marshal(record("old"))
		if err != nil {
			return err
		}
		return pods.Put([]byte("old"), data)
	})
	if v := readSchema(t, path); v != 0 {
		t.Fatalf("fixture schema %d, want 0", v)
	}
	s := openAt(t, path, Options{})
	if got := mustList(t, s); len(got) != 1 || got[0].UID != "old" {
		t.Fatalf("after migration: %+v, want the old record", got)
	}
	s.Close()
	if v := readSchema(t, path); v != schemaVersion {
		t.Fatalf("schema after migration %d, want %d", v, schemaVersion)
	}
}

func TestBoltRefusesNewerSchemaAndLeavesFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	writeRaw(t, path, func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		var v [4]byte
		binary.BigEndian.PutUint32(v[:], schemaVersion+1)
		return meta.Put(keySchema, v[:])
	})
	before, _ := os.ReadFile(path)
	beforeInfo, _ := os.Stat(path)
	_, err := Open(path, Options{})
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open = %v, want ErrNewerSchema naming the file", err)
	}
	after, _ := os.ReadFile(path)
	afterInfo, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !os.SameFile(beforeInfo, afterInfo) || !beforeInfo.ModTime().Equal(afterInfo.ModTime()) {
		t.Error("a refused newer file was rewritten or replaced")
	}
	if matches, _ := filepath.Glob(path + ".corrupt-*"); len(matches) != 0 {
		t.Errorf("a newer file was moved aside: %v", matches)
	}
}

func TestBoltMovesCorruptFileAside(t *testing.T) {
	valid := func(t *testing.T) []byte {
		p := filepath.Join(t.TempDir(), "valid.db")
		s := openAt(t, p, Options{})
		for _, uid := range []string{"a", "b", "c"} {
			if err := put(s, record(uid)); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := map[string]func(t *testing.T) []byte{
		"junk":      func(*testing.T) []byte { return bytes.Repeat([]byte("not a bolt file "), 512) },
		"truncated": func(t *testing.T) []byte { return valid(t)[:4096+100] },
		"meta pages zeroed": func(t *testing.T) []byte {
			b := valid(t)
			clear(b[:2*4096])
			return b
		},
		"data pages scribbled": func(t *testing.T) []byte {
			b := valid(t)
			for i := 2 * 4096; i < len(b); i += 7 {
				b[i] ^= 0xA5
			}
			return b
		},
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "checkpoint.db")
			bad := content(t)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			var logged []string
			log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
			clk := clocktesting.NewFakePassiveClock(t0)
			s := openAt(t, path, Options{Logger: log, Clock: clk})

			if got := mustList(t, s); len(got) != 0 {
				t.Errorf("fresh store after corruption lists %+v", got)
			}
			if err := put(s, record("new")); err != nil {
				t.Fatalf("the fresh store does not work: %v", err)
			}
			aside := path + ".corrupt-" + t0.Format("20060102T150405.000000000Z")
			kept, err := os.ReadFile(aside)
			if err != nil || !bytes.Equal(kept, bad) {
				t.Errorf("the corrupt file was not kept intact at %s (err %v)", aside, err)
			}
			if len(logged) != 1 || !strings.Contains(logged[0], "moved aside") || !strings.Contains(logged[0], aside) {
				t.Errorf("log = %q, want one line saying where the file went", logged)
			}
		})
	}
}

func TestBoltSkipsAndReportsCorruptRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	s := openAt(t, path, Options{})
	if err := put(s, record("good")); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPods).Put([]byte("bad"), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List()
	if !errors.Is(err, ErrCorruptRecord) || !strings.Contains(err.Error(), "pod bad") {
		t.Errorf("List error = %v, want ErrCorruptRecord naming pod bad", err)
	}
	if len(recs) != 1 || recs[0].UID != "good" {
		t.Errorf("List records = %+v, want the good one", recs)
	}
	// A corrupt record is replaced by a good put, not a reason to fail.
	if err := put(s, record("bad")); err != nil {
		t.Fatalf("put over a corrupt record: %v", err)
	}
	if _, err := s.List(); err != nil {
		t.Errorf("List after repair: %v", err)
	}
}

func TestBoltSecondOpenIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoint.db")
	openAt(t, path, Options{})
	_, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a locked file must stay where it is: %v", err)
	}
}
