package cgroups

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// removeCgroups removes a pod's cgroup directories, which containerd
// creates for the sandbox's cgroup parent but leaves when the sandbox goes:
// <fsRoot>/<parent> under cgroup v2 and <fsRoot>/<hierarchy>/<parent> in
// every cgroup v1 hierarchy. A cgroup directory holds only kernel files, so
// it is removed with rmdir, children before parents. A cgroup whose last
// process is still exiting is busy for a moment; that is retried briefly.
// Only a pod's cgroup (pod<uid>, or a pod's systemd slice) is removed,
// and only beneath fsRoot.
func removeCgroups(ctx context.Context, fsRoot, parent string) error {
	parent = path.Clean("/" + parent)
	if !isPodCgroup(path.Base(parent)) {
		return fmt.Errorf("cgroup %s: not a pod's cgroup", parent)
	}
	realRoot, err := filepath.EvalSymlinks(fsRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", parent, err)
	}
	candidates := []string{filepath.Join(fsRoot, parent)}
	v1, err := filepath.Glob(filepath.Join(fsRoot, "*", parent))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", parent, err)
	}
	candidates = append(candidates, v1...)
	seen := map[string]bool{} // hierarchies mounted twice (cpu -> cpu,cpuacct)
	var errs []error
	for _, dir := range candidates {
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !beneath(realRoot, real) {
			errs = append(errs, fmt.Errorf("%s resolves to %s, outside %s", dir, real, realRoot))
			continue
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		if err := removeTree(ctx, real); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing the cgroups of %s: %w", parent, err)
	}
	return nil
}

// beneath tells whether the clean path dir lies strictly beneath root.
func beneath(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// removeTree rmdirs every directory under root, deepest first.
func removeTree(ctx context.Context, root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Reverse(dirs) // WalkDir visits parents before children
	for _, d := range dirs {
		if err := rmdirRetry(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

func rmdirRetry(ctx context.Context, dir string) error {
	const attempts, pause = 20, 50 * time.Millisecond
	for i := 0; ; i++ {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || i == attempts-1 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (%w)", dir, err, ctx.Err())
		case <-time.After(pause):
		}
	}
}
