package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// corruptError says the file is not a readable checkpoint and may be moved
// aside; other open errors (permissions, a held lock) are not a reason to
// touch the file.
type corruptError struct{ cause error }

func (e *corruptError) Error() string { return e.cause.Error() }

// openChecked opens the checkpoint for writing, rebuilt. The old file is
// read once, read-only, every key and value of it; its contents are copied
// into a new file, which then replaces it. The agent thus never writes into
// pages it has not built itself: damage to the old file's freelist or spare
// meta page, which bolt's reads never notice and its writes would trip on,
// is left behind with the old file. A file that cannot be read through is a
// corruptError. The checkpoint is small (a record per static pod), so the
// rebuild costs little. Where the rebuilt copy cannot be written (a full
// disk), the file, which was just read through, is opened as it is: an
// agent that cannot start is worse than one writing into old pages.
func openChecked(path string, lockTimeout time.Duration, log logr.Logger) (*bolt.DB, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return openRW(path, lockTimeout)
	case err != nil:
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	case fi.Size() == 0:
		// What a crash during the very first creation leaves: nothing lost.
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		return openRW(path, lockTimeout)
	}
	contents, err := readAll(path, lockTimeout)
	if err != nil {
		return nil, err
	}
	// A newer agent's file is refused before anything is written.
	if err := contents.checkSchema(path); err != nil {
		return nil, err
	}
	tmp := path + ".rebuild"
	if err := writeAll(tmp, contents); err != nil {
		_ = os.Remove(tmp) // best effort; the write error is the one to report
		log.Error(err, "Checkpoint: could not write a rebuilt copy; opening the file as it is", "path", path)
		return openRW(path, lockTimeout)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp) // best effort; the rename error is the one to report
		return nil, fmt.Errorf("checkpoint %s: rebuilding: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("checkpoint %s: rebuilding: %w", path, err)
	}
	return openRW(path, lockTimeout)
}

func openRW(path string, lockTimeout time.Duration) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("checkpoint %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return db, nil
}

// bucket is a bucket's contents held in memory.
type bucket struct {
	keys, values [][]byte
	nested       map[string]*bucket
}

// readAll reads every bucket, key and value of the file into memory.
func readAll(path string, lockTimeout time.Duration) (root *bucket, err error) {
	// The file is memory-mapped: a damaged page can point outside the
	// mapping, a fatal fault unless turned into a panic, recovered below
	// with bolt's own assertion panics.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, &corruptError{cause: fmt.Errorf("checkpoint %s: reading it failed: %v", path, r)}
		}
	}()
	db, err := bolt.Open(path, 0o400, &bolt.Options{Timeout: lockTimeout, ReadOnly: true})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("checkpoint %s: %w", path, ErrLocked)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	case err != nil:
		// Anything else bolt refuses (bad magic, checksum, version, a
		// truncated file) means the content is unusable. Moving it aside
		// keeps it for inspection and destroys nothing.
		return nil, &corruptError{cause: fmt.Errorf("checkpoint %s: %w", path, err)}
	}
	defer db.Close()
	root = &bucket{nested: map[string]*bucket{}}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			nb, err := readBucket(b)
			root.nested[string(name)] = nb
			return err
		})
	})
	if err != nil {
		return nil, &corruptError{cause: fmt.Errorf("checkpoint %s: %w", path, err)}
	}
	return root, nil
}

func readBucket(b *bolt.Bucket) (*bucket, error) {
	out := &bucket{nested: map[string]*bucket{}}
	err := b.ForEach(func(k, v []byte) error {
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				inner, err := readBucket(nb)
				out.nested[string(k)] = inner
				return err
			}
		}
		// Copies: the mapping goes away with the file.
		out.keys = append(out.keys, append([]byte(nil), k...))
		out.values = append(out.values, append([]byte{}, v...))
		return nil
	})
	return out, err
}

// writeAll builds a new file holding root's buckets, in one transaction.
func writeAll(path string, root *bucket) error {
	_ = os.Remove(path) // a leftover of an interrupted rebuild
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for name, b := range root.nested {
			nb, err := tx.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			if err := writeBucket(nb, b); err != nil {
				return err
			}
		}
		return nil
	})
	return errors.Join(err, db.Close())
}

func writeBucket(dst *bolt.Bucket, src *bucket) error {
	for i, k := range src.keys {
		if err := dst.Put(k, src.values[i]); err != nil {
			return err
		}
	}
	for name, b := range src.nested {
		nb, err := dst.CreateBucket([]byte(name))
		if err != nil {
			return err
		}
		if err := writeBucket(nb, b); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir) // #nosec G304 -- the checkpoint file's own directory, opened to fsync it
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
