package checkpointtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Where every schema keeps its version (see the tree in
// internal/checkpoint's schema.go). These names are frozen: an agent finds
// a newer schema's version there, so no schema may move it.
var (
	bucketMeta = []byte("meta")
	keySchema  = []byte("schema")
)

// SetSchema stamps the existing checkpoint file at path with schema
// version v and changes nothing else in it: its pods stay as they were
// written. The file must not be held open (the agent stopped); a held file
// is an error after a short wait, not a hang. The file's mode is kept.
//
// With v above checkpoint.SchemaVersion(), the file is one a newer agent
// could have left: checkpoint.Open refuses it with
// checkpoint.ErrNewerSchema.
func SetSchema(path string, v uint32) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("checkpointtest: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("checkpointtest: opening %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		var buf [4]byte
		binary.BigEndian.PutUint32(buf[:], v)
		return meta.Put(keySchema, buf[:])
	})
	if err = errors.Join(err, db.Close()); err != nil {
		return fmt.Errorf("checkpointtest: stamping %s with schema %d: %w", path, v, err)
	}
	return nil
}
