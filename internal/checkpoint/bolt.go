package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	bolt "go.etcd.io/bbolt"
	"k8s.io/utils/clock"
)

// Options configure Open.
type Options struct {
	// Logger receives the line that says a corrupt file was moved aside.
	Logger logr.Logger
	// Clock stamps records and names moved-aside files. Default: real.
	Clock clock.PassiveClock
	// LockTimeout bounds the wait for another process's lock. Default 2s.
	LockTimeout time.Duration
}

// Bolt is the checkpoint on disk.
type Bolt struct {
	db *bolt.DB
}

var _ Store = (*Bolt)(nil)

// Open opens or creates the checkpoint at path with mode 0600. A file that
// is not a readable checkpoint is renamed to <path>.corrupt-<time> and a new
// one is created; a file of a newer schema is refused with ErrNewerSchema.
func Open(path string, opts Options) (*Bolt, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	db, err := openChecked(path, opts.LockTimeout, opts.Logger)
	var corrupt *corruptError
	if errors.As(err, &corrupt) {
		aside := fmt.Sprintf("%s.corrupt-%s", path, opts.Clock.Now().UTC().Format("20060102T150405.000000000Z"))
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("checkpoint %s is unreadable (%v) and could not be moved aside: %w", path, corrupt.cause, rerr)
		}
		opts.Logger.Error(corrupt.cause, "Checkpoint unreadable; moved aside, starting from the sources", "path", path, "movedTo", aside)
		db, err = openChecked(path, opts.LockTimeout, opts.Logger)
	}
	if err != nil {
		return nil, err
	}
	if err := migrate(db, path); err != nil {
		_ = db.Close() // the migration error is the one to report
		return nil, err
	}
	// bolt creates with the mode given, but an existing file keeps its own.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = db.Close() // the chmod error is the one to report
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return &Bolt{db: db}, nil
}

// Apply implements Store.
func (b *Bolt) Apply(changes []Change) error {
	if err := validateChanges(changes); err != nil {
		return err
	}
	return b.db.Update(func(tx *bolt.Tx) error {
		pods := tx.Bucket(bucketPods)
		for _, c := range changes {
			if c.Record == nil {
				if err := pods.Delete([]byte(c.UID)); err != nil {
					return fmt.Errorf("pod %s: %w", c.UID, err)
				}
				continue
			}
			data, err := json.Marshal(c.Record)
			if err != nil {
				return fmt.Errorf("pod %s: %w", c.UID, err)
			}
			if err := pods.Put([]byte(c.UID), data); err != nil {
				return fmt.Errorf("pod %s: %w", c.UID, err)
			}
		}
		return nil
	})
}

// List implements Store. Keys are UIDs, so bolt's order is UID order.
func (b *Bolt) List() ([]PodRecord, error) {
	var recs []PodRecord
	var errs []error
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPods).ForEach(func(k, v []byte) error {
			rec, err := decode(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("pod %s: %w", k, err))
				return nil
			}
			recs = append(recs, *rec)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return recs, errors.Join(errs...)
}

// Close implements Store.
func (b *Bolt) Close() error { return b.db.Close() }

// decode returns nil for an absent value.
func decode(v []byte) (*PodRecord, error) {
	if v == nil {
		return nil, nil
	}
	var rec PodRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptRecord, err)
	}
	if err := rec.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptRecord, err)
	}
	return &rec, nil
}
