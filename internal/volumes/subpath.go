package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A subPath is a path inside a volume that the pod's own containers may
// have written, symlinks included. Handing the runtime <volume>/<subPath>
// would let the runtime follow such a symlink out of the volume, onto any
// host path (CVE-2017-1002101). Instead the agent resolves the subPath
// beneath the volume itself (openBeneath), holds what it found by a
// descriptor, and bind-mounts that descriptor onto a mount point of its
// own:
//
//	<RootDir>/pods/<uid>/volume-subpaths/<volume>/<container>/<index>
//
// The runtime gets that mount point, which no container can reach or
// swap: the mount holds the file or directory it was made of, whatever
// its path becomes. Every Setup resolves the subPath again; the mount is
// kept while the subPath still names what it holds, and replaced when a
// container replaced the subPath with another file or directory inside
// the volume. A subPath that now leads out of the volume (a symlink
// planted after the first start) is refused. Cleanup unmounts these
// mounts before it removes the pod's directory.

const subPathsDir = "volume-subpaths"

// subPathMounter makes the subPath mounts of one pod during one Setup.
type subPathMounter struct {
	pods    *os.Root // the pods dir, by its real path
	uid     string
	mounted map[string]bool // mount points beneath the pod's subPathsDir
}

func (m *Manager) newSubPathMounter(uid types.UID) (*subPathMounter, error) {
	pods, err := m.openPodsDir(true)
	if err != nil {
		return nil, err
	}
	mps, err := mountPoints(filepath.Join(pods.Name(), string(uid), subPathsDir))
	if err != nil {
		_ = pods.Close()
		return nil, err
	}
	mounted := make(map[string]bool, len(mps))
	for _, mp := range mps {
		mounted[mp] = true
	}
	return &subPathMounter{pods: pods, uid: string(uid), mounted: mounted}, nil
}

func (s *subPathMounter) close() { _ = s.pods.Close() }

// mount returns the host path of the index'th volumeMount of container,
// which has a subPath into the volume at volPath. With keep (a volume the
// agent writes atomically), a mount made once is kept: it holds the file
// it was made of, not a later update, as the kubelet's subPaths of such
// volumes do.
func (s *subPathMounter) mount(container string, index int, vm corev1.VolumeMount, volPath string, keep bool) (string, error) {
	refuse := func(why error) error {
		return fmt.Errorf("volumeMount %s: volume %q subPath %q: %w: %w", vm.MountPath, vm.Name, vm.SubPath, why, ErrInvalidMount)
	}
	if !isPathComponent(vm.Name) || !isPathComponent(container) {
		return "", refuse(errors.New("the volume or container name cannot name a directory"))
	}
	rel := filepath.Join(s.uid, subPathsDir, vm.Name, container, strconv.Itoa(index))
	target := filepath.Join(s.pods.Name(), rel)
	if keep && s.mounted[target] {
		return target, nil
	}
	root, err := unix.Open(volPath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", refuse(fmt.Errorf("opening the volume at %s: %w", volPath, err))
	}
	defer unix.Close(root)
	fd, err := openBeneath(root, vm.SubPath)
	// A missing subPath is created, but not in a volume the agent writes
	// atomically: that holds nothing but its payload.
	if errors.Is(err, unix.ENOENT) && !keep {
		fd, err = makeDirsBeneath(root, vm.SubPath)
	}
	if err != nil {
		return "", refuse(err)
	}
	defer unix.Close(fd)
	if s.mounted[target] {
		if holds(target, fd) {
			return target, nil
		}
		if err := unmountAll(target); err != nil {
			return "", fmt.Errorf("volumeMount %s: volume %q subPath %q: replacing its mount: %w", vm.MountPath, vm.Name, vm.SubPath, err)
		}
	}
	if err := s.bind(fd, rel, target); err != nil {
		return "", fmt.Errorf("volumeMount %s: volume %q subPath %q: bind mount: %w", vm.MountPath, vm.Name, vm.SubPath, err)
	}
	s.mounted[target] = true
	return target, nil
}

// holds tells whether the mount at target holds the file fd is.
func holds(target string, fd int) bool {
	var a, b unix.Stat_t
	return unix.Lstat(target, &a) == nil && unix.Fstat(fd, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// bind makes target (rel beneath the pods dir) a mount point of the kind
// fd is (directory or file) and bind-mounts fd onto it. /proc/self/fd/N
// names exactly what fd holds, whatever happened to its path since.
func (s *subPathMounter) bind(fd int, rel, target string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if err := s.pods.MkdirAll(filepath.Dir(rel), 0o750); err != nil {
		return err
	}
	// Nothing is mounted there now, so a leftover of the wrong kind is the
	// agent's own empty mount point.
	if fi, err := s.pods.Lstat(rel); err == nil && fi.IsDir() != isDir {
		if err := s.pods.Remove(rel); err != nil {
			return err
		}
	}
	if isDir {
		if err := s.pods.Mkdir(rel, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else {
		f, err := s.pods.OpenFile(rel, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_ = f.Close()
	}
	return unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), target, "", unix.MS_BIND, "")
}

// unmountAll unmounts every mount at or beneath dir (a path with no
// symlink), deepest first, and makes sure none is left: removing dir must
// never reach through a subPath's bind mount into the volume, let alone a
// hostPath. MNT_DETACH takes the mount out of the tree even while the
// agent's namespace still uses it.
func unmountAll(dir string) error {
	const passes = 8 // mounts stacked on one mount point go one per pass
	for range passes {
		mps, err := mountPoints(dir)
		if err != nil {
			return err
		}
		if len(mps) == 0 {
			return nil
		}
		slices.SortFunc(mps, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
		for _, mp := range mps {
			err := unix.Unmount(mp, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
			if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("unmounting %s: %w", mp, err)
			}
		}
	}
	mps, err := mountPoints(dir)
	if err == nil && len(mps) > 0 {
		err = fmt.Errorf("mounts remain beneath %s: %s", dir, strings.Join(mps, ", "))
	}
	return err
}

// isPathComponent tells whether name can be one directory's name.
func isPathComponent(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}
