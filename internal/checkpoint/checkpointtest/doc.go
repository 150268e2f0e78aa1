// Package checkpointtest makes checkpoint files that this build of the
// agent cannot make itself, for tests of what it does with them: a file
// left by a newer agent (a downgrade) or by an older one.
//
// It lives under internal/checkpoint so that the dependency rule holds:
// only internal/checkpoint and its subpackages import go.etcd.io/bbolt, and
// a test that needs such a file imports this package instead.
//
//	// The agent stopped; its checkpoint now looks like a newer agent's.
//	err := checkpointtest.SetSchema(path, checkpoint.SchemaVersion()+1)
package checkpointtest
