// Package checkpoint is the agent's durable memory of its static pods: every
// static pod as last accepted from its source (source, origin, hash, UID and
// the manifest itself) and where each pod is in its lifecycle (running,
// terminating with a deadline, terminated, and the final status of a pod
// that completed).
//
// After a crash or reboot the agent reads it before its sources answer, so
// that static pods come back even while their HTTP source or the apiserver
// is down. It is memory, never authority: a source that answers overrides
// whatever the checkpoint holds.
//
// Bolt is the store on disk (the only importer of go.etcd.io/bbolt in the
// repository); Mem implements the same Store interface in memory for tests.
//
//	store, err := checkpoint.Open(filepath.Join(rootDir, "checkpoint.db"), checkpoint.Options{Logger: log})
//	rec := checkpoint.PodRecord{UID: pod.UID, Source: podtypes.FileSource, Origin: path, Hash: hash, Pod: pod, Phase: checkpoint.Running}
//	err = store.Apply([]checkpoint.Change{{UID: pod.UID, Record: &rec}}) // one transaction, one fsync
//	records, err := store.List()
//
// Open reads the whole file once, read-only and fault-safe, and rebuilds it
// into a fresh file, so that the agent only ever writes into pages it built
// itself. A file that cannot be read as a checkpoint is moved aside with a
// log line and a fresh one is started: the agent then relies on its
// sources. A file written by a newer schema is refused with ErrNewerSchema
// before anything is written, so a downgrade never destroys a newer agent's
// state.
package checkpoint
