package host

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FSStats are a filesystem's total and available bytes (available to
// unprivileged users, as cAdvisor gives them to the kubelet) and inodes.
type FSStats struct {
	Capacity, Available int64
	Inodes, InodesFree  int64
}

// StatFS measures the filesystem that holds path.
func StatFS(path string) (FSStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return FSStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := int64(st.Bsize) // #nosec G115 -- a block size is small and positive
	return FSStats{
		Capacity:   int64(st.Blocks) * bs, // #nosec G115 -- block counts fit int64
		Available:  int64(st.Bavail) * bs, // #nosec G115 -- as above
		Inodes:     int64(st.Files),       // #nosec G115 -- as above
		InodesFree: int64(st.Ffree),       // #nosec G115 -- as above
	}, nil
}

// FilesSize is the bytes of the regular files directly in dir (a
// container's logs, the current one and those rotated); 0 if it cannot
// be read.
func FilesSize(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}
