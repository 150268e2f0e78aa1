package volumes

import (
	"errors"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// errEscapes: a path resolves outside the directory it must stay beneath,
// through an absolute symlink or a ".." that climbs above it.
var errEscapes = errors.New("resolves outside the volume")

// errDangling: a path ends in a symlink whose target (beneath the volume)
// does not exist; the agent creates no directory through a symlink.
var errDangling = errors.New("is a dangling symlink")

// maxSymlinks bounds the symlinks followed in one resolution, as the
// kernel does (40).
const maxSymlinks = 40

// openBeneath opens rel, a relative slash-separated path, beneath the
// directory dirfd and returns an O_PATH descriptor of what it names.
// Symlinks on the way, the last component's included, are followed only
// while they stay beneath dirfd: an absolute one, or a ".." above dirfd,
// fails with errEscapes; /proc's magic links are refused. openat2 does
// this atomically; kernels older than 5.6 get the same rules from a walk
// one component at a time.
func openBeneath(dirfd int, rel string) (int, error) {
	fd, err := openat2Beneath(dirfd, rel)
	if errors.Is(err, unix.ENOSYS) {
		return walkBeneath(dirfd, rel)
	}
	return fd, err
}

func openat2Beneath(dirfd int, rel string) (int, error) {
	how := &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	var err error
	// EAGAIN: a rename somewhere in the volume raced the lookup, which the
	// kernel then refuses to vouch for; a few tries settle it.
	for range 16 {
		var fd int
		fd, err = unix.Openat2(dirfd, rel, how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EXDEV):
			return -1, errEscapes
		}
		return -1, err
	}
	return -1, err
}

// walkBeneath resolves rel as openat2 with RESOLVE_BENEATH does, one
// component at a time, never letting the kernel follow a symlink: each
// component is opened with O_NOFOLLOW, a symlink's target is read from the
// descriptor that was opened (so it cannot be swapped in between) and
// walked in turn. ".." goes back to the directory walked before, which
// keeps the walk beneath dirfd even if directories move meanwhile.
func walkBeneath(dirfd int, rel string) (int, error) {
	root, err := unix.Openat(dirfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	stack := []int{root} // the directories walked; the last is the current one
	defer func() {
		for _, fd := range stack {
			_ = unix.Close(fd)
		}
	}()
	todo := splitPath(rel)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if name == ".." {
			if len(stack) == 1 {
				return -1, errEscapes
			}
			_ = unix.Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		fd, err := unix.Openat(stack[len(stack)-1], name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := readlinkFD(fd)
			_ = unix.Close(fd)
			if err != nil {
				return -1, err
			}
			if links++; links > maxSymlinks {
				return -1, unix.ELOOP
			}
			if path.IsAbs(target) {
				return -1, errEscapes
			}
			todo = append(splitPath(target), todo...)
			continue
		}
		if len(todo) > 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			_ = unix.Close(fd)
			return -1, unix.ENOTDIR
		}
		stack = append(stack, fd)
	}
	fd := stack[len(stack)-1]
	stack = stack[:len(stack)-1]
	return fd, nil
}

// readlinkFD reads the target of the symlink an O_PATH|O_NOFOLLOW
// descriptor holds.
func readlinkFD(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	if n == len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// splitPath splits a slash-separated path into its components, dropping
// empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// makeDirsBeneath creates the missing directories of rel beneath dirfd
// and returns an O_PATH descriptor of rel. Each directory it creates gets
// the owner, group and mode bits (setgid and sticky too) of dirfd: who
// may write the volume may write its subPath, and no one else. A
// component that exists may be a symlink that stays beneath dirfd; one
// that is a dangling symlink is refused rather than created through.
func makeDirsBeneath(dirfd int, rel string) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return -1, err
	}
	mode := st.Mode & (0o777 | unix.S_ISGID | unix.S_ISVTX)
	parts := splitPath(rel)
	for i := range parts {
		fd, err := openBeneath(dirfd, strings.Join(parts[:i+1], "/"))
		if err == nil {
			_ = unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return -1, err
		}
		if err := mkdirBeneath(dirfd, parts[:i], parts[i], st.Uid, st.Gid, mode); err != nil {
			return -1, err
		}
	}
	return openBeneath(dirfd, rel)
}

// mkdirBeneath creates the directory name in the directory parents names
// beneath dirfd, then gives it uid, gid and mode (mkdir's mode is cut by
// the umask; fchmod's is not).
func mkdirBeneath(dirfd int, parents []string, name string, uid, gid, mode uint32) error {
	parent := dirfd
	if len(parents) > 0 {
		fd, err := openBeneath(dirfd, strings.Join(parents, "/"))
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		parent = fd
	}
	err := unix.Mkdirat(parent, name, 0o700)
	if errors.Is(err, unix.EEXIST) {
		// Not found a moment ago, yet there: a symlink to nothing.
		var lst unix.Stat_t
		if unix.Fstatat(parent, name, &lst, unix.AT_SYMLINK_NOFOLLOW) == nil && lst.Mode&unix.S_IFMT == unix.S_IFLNK {
			return errDangling
		}
		return nil
	}
	if err != nil {
		return err
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, int(uid), int(gid)); err != nil {
		return err
	}
	return unix.Fchmod(fd, mode)
}
