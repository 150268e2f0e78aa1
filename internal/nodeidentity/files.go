package nodeidentity

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Bounds on the files this package reads: a kubeconfig, and the CA bundle,
// certificate, key and token files it names. Real ones are a few KiB; a CA
// bundle of a few hundred certificates still fits.
const (
	maxKubeconfigBytes = 1 << 20
	maxReferencedBytes = 1 << 20
)

// readBounded reads the file at path, refusing one larger than limit.
// Errors name the file; a missing file's error satisfies errors.Is(err,
// fs.ErrNotExist).
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator's own kubeconfig, or a file it names
	if err != nil {
		return nil, err // *PathError names the file
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// writeAtomic replaces path with data, mode 0600: a crash leaves either
// the old file or the new one, never a torn one.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp) // best effort; err is the one to report
		}
	}()
	// CreateTemp makes the file 0600, and a umask only takes bits away.
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir) // #nosec G304 -- the directory of a file just written, opened to fsync it
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// checkWritableDir makes dir (0700) if it is missing and proves a file can
// be created in it, so that a read-only cert dir fails at start with its
// name rather than at the first rotation months later.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cert dir %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-check-")
	if err != nil {
		return fmt.Errorf("cert dir %s is not writable: %w", dir, err)
	}
	name := f.Name()
	cerr := f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("cert dir %s: %w", dir, err)
	}
	return cerr
}
