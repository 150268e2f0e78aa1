package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

// writeAtomic replaces path with data so that the agent reads either the
// old file or the new one, never a part: a temporary file in the same
// directory (hidden, so the agent ignores it), synced, renamed over path,
// and the directory synced so the rename survives a crash. A failure
// leaves path as it was.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir, name := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+name+".manifestctl-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir) // #nosec G304 -- the operator's manifest or backup directory
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// fileMode is the mode a replaced file had, or 0600 for a new one: a
// manifest may hold what only root should read.
func fileMode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// backup copies the file at path into dir under its own name, replacing
// the previous backup: one version back, as rollback needs. A missing file
// has nothing to keep.
func backup(dir, path string) error {
	data, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("backing up: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("backup directory: %w", err)
	}
	return writeAtomic(filepath.Join(dir, filepath.Base(path)), data, fileMode(path))
}

// readBounded reads a file of at most manifest.MaxManifestBytes, the most a
// manifest may hold.
func readBounded(path string) ([]byte, error) {
	return readRegularFile(path, manifest.MaxManifestBytes, "a manifest")
}

// readRegularFile reads the regular file at path, of at most limit bytes;
// what names such a file in the error of a larger one.
func readRegularFile(path string, limit int, what string) ([]byte, error) {
	// Opening a FIFO would block: only a regular file is read.
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path) // #nosec G304 -- a file the operator names
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: larger than %s may be (%d bytes)", path, what, limit)
	}
	return data, nil
}
