package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
)

// errOverLimit ends a usage walk once the count passes its bound.
var errOverLimit = errors.New("over the limit")

// EmptyDirUsage is the disk space the pod's emptyDir volume uses, in
// bytes, counted as du counts it (allocated blocks, each file once however
// many links it has). The walk stops as soon as the count passes
// stopAbove (when above zero), so that a volume far over its limit costs
// no more than one just over it. The walk stays beneath the volume: the
// pod's containers write in it, and a symlink is counted, not followed.
func (m *Manager) EmptyDirUsage(uid types.UID, volume string, stopAbove int64) (int64, error) {
	if err := checkUID(uid); err != nil {
		return 0, err
	}
	if !isPathComponent(volume) {
		return 0, fmt.Errorf("emptyDir %q: %w", volume, ErrInvalidMount)
	}
	root, err := os.OpenRoot(m.EmptyDirPath(uid, volume))
	if err != nil {
		return 0, fmt.Errorf("emptyDir %q: %w", volume, err)
	}
	defer root.Close()
	var used int64
	seen := map[uint64]bool{} // inodes of files with more than one link
	err = fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by the pod meanwhile
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		used += st.Blocks * 512
		if stopAbove > 0 && used > stopAbove {
			return errOverLimit
		}
		return nil
	})
	if err != nil && !errors.Is(err, errOverLimit) {
		return used, fmt.Errorf("emptyDir %q: %w", volume, err)
	}
	return used, nil
}
