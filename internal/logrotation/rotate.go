package logrotation

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// rotate makes room for one more rotated file of the log at path, then
// renames the log to <path>.<timestamp> and has the runtime reopen it. If
// the runtime cannot (the container has just stopped, say), the file is
// renamed back.
func (r *Rotator) rotate(ctx context.Context, id, path string) error {
	rotated, err := r.tidy(path)
	if err != nil {
		return err
	}
	next := path + "." + r.opts.Clock.Now().UTC().Format(timestampLayout)
	if slices.Contains(rotated, next) || slices.Contains(rotated, next+compressedSuffix) {
		return nil // rotated within this second already: next time
	}
	if err := os.Rename(path, next); err != nil {
		return fmt.Errorf("renaming the log: %w", err)
	}
	if err := r.opts.Runtime.ReopenContainerLog(ctx, id); err != nil {
		if back := os.Rename(next, path); back != nil {
			return errors.Join(err, fmt.Errorf("renaming the log back: %w", back))
		}
		return err
	}
	r.log.V(2).Info("Rotated a container log", "containerID", id, "path", path, "rotated", filepath.Base(next))
	return nil
}

// tidy prepares the rotated files of the log at path for one more: it
// removes what an interrupted compression left, removes the oldest
// rotated files beyond MaxFiles-2 (the current file and the one about to
// be rotated make MaxFiles), and compresses the others. It returns the
// rotated files left, oldest first.
func (r *Rotator) tidy(path string) ([]string, error) {
	rotated, err := rotatedFiles(path)
	if err != nil {
		return nil, err
	}
	keep := r.opts.MaxFiles - 2
	for len(rotated) > keep {
		if err := os.Remove(rotated[0]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing an old rotated log: %w", err)
		}
		rotated = rotated[1:]
	}
	for i, f := range rotated {
		if strings.HasSuffix(f, compressedSuffix) {
			continue
		}
		if err := compress(f); err != nil {
			return nil, err
		}
		rotated[i] = f + compressedSuffix
	}
	return rotated, nil
}

// rotatedFiles lists the rotated files of the log at path, oldest first:
// <path>.<timestamp>, compressed or not. Files of an interrupted
// compression are removed: a .tmp file, and an uncompressed file whose
// compressed copy is complete.
func rotatedFiles(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the log directory: %w", err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		stamp, ok := strings.CutPrefix(name, base+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if unfinished, ok := strings.CutSuffix(stamp, compressedSuffix+inProgressSuffix); ok && isTimestamp(unfinished) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("removing an unfinished compression: %w", err)
			}
			continue
		}
		plain := strings.TrimSuffix(stamp, compressedSuffix)
		if !isTimestamp(plain) {
			continue // not a rotated log
		}
		if plain == stamp && names[name+compressedSuffix] {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("removing a log compressed already: %w", err)
			}
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	// The timestamps sort as the times they name.
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(strings.TrimSuffix(a, compressedSuffix), strings.TrimSuffix(b, compressedSuffix))
	})
	return out, nil
}

func isTimestamp(s string) bool {
	_, err := time.Parse(timestampLayout, s)
	return err == nil
}

// compress replaces the file with <file>.gz, written first as a .tmp
// file so that a compression cut short is never taken for a complete one.
func compress(file string) error {
	in, err := os.Open(file) // #nosec G304 -- a rotated log in the runtime's log directory
	if err != nil {
		return fmt.Errorf("compressing a rotated log: %w", err)
	}
	defer func() { _ = in.Close() }()
	tmp := file + compressedSuffix + inProgressSuffix
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640) // #nosec G304 -- beside the rotated log
	if err != nil {
		return fmt.Errorf("compressing a rotated log: %w", err)
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	err = errors.Join(err, zw.Close(), out.Close())
	if err == nil {
		err = os.Rename(tmp, file+compressedSuffix)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("compressing a rotated log: %w", err)
	}
	if err := os.Remove(file); err != nil {
		return fmt.Errorf("removing a rotated log after compressing it: %w", err)
	}
	return nil
}
