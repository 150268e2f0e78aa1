package checkpoint

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The file's bucket tree:
//
//	meta/
//	  schema  -> uint32, big endian: the schema version of the file
//	pods/
//	  <uid>   -> PodRecord as JSON
//
// A new file has no buckets and counts as schema 0. Opening a file runs, in
// order, every migration from its version up to schemaVersion, all in one
// transaction, so a crash mid-way leaves the file at its old version.
//
// meta/schema never moves: an agent reads it to refuse a file of a newer
// schema, so every later schema must keep it where older agents look
// (checkpointtest.SetSchema writes it there too).

var (
	bucketMeta = []byte("meta")
	bucketPods = []byte("pods")
	keySchema  = []byte("schema")
)

// migrations[i] moves a file from schema i to schema i+1. Append only:
// never edit a step that has shipped.
var migrations = []func(tx *bolt.Tx) error{
	// 0 -> 1: the meta and pods buckets.
	func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketPods} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	},
}

// schemaVersion is what this build writes.
var schemaVersion = uint32(len(migrations))

// SchemaVersion is the newest schema this build reads, and the one it
// writes: Open migrates an older file up to it and refuses a newer one
// with ErrNewerSchema.
func SchemaVersion() uint32 { return schemaVersion }

// fileSchema reads a file's schema version; no meta bucket means 0.
func fileSchema(tx *bolt.Tx) (uint32, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, nil
	}
	if len(v) != 4 {
		return 0, fmt.Errorf("schema version is %d bytes, want 4", len(v))
	}
	return binary.BigEndian.Uint32(v), nil
}

// checkSchema refuses contents read from a file of a newer schema.
func (root *bucket) checkSchema(path string) error {
	meta := root.nested[string(bucketMeta)]
	if meta == nil {
		return nil
	}
	for i, k := range meta.keys {
		if string(k) != string(keySchema) {
			continue
		}
		v := meta.values[i]
		if len(v) != 4 {
			return &corruptError{cause: fmt.Errorf("checkpoint %s: schema version is %d bytes, want 4", path, len(v))}
		}
		if from := binary.BigEndian.Uint32(v); from > schemaVersion {
			return fmt.Errorf("checkpoint %s: file schema %d, this agent knows up to %d: %w", path, from, schemaVersion, ErrNewerSchema)
		}
	}
	return nil
}

// migrate brings the file up to schemaVersion, or refuses a newer one.
func migrate(db *bolt.DB, path string) error {
	return db.Update(func(tx *bolt.Tx) error {
		from, err := fileSchema(tx)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", path, err)
		}
		if from > schemaVersion {
			return fmt.Errorf("checkpoint %s: file schema %d, this agent knows up to %d: %w", path, from, schemaVersion, ErrNewerSchema)
		}
		for v := from; v < schemaVersion; v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("checkpoint %s: migrating schema %d to %d: %w", path, v, v+1, err)
			}
		}
		if from == schemaVersion {
			return nil
		}
		var buf [4]byte
		binary.BigEndian.PutUint32(buf[:], schemaVersion)
		return tx.Bucket(bucketMeta).Put(keySchema, buf[:])
	})
}
