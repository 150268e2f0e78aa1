package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The contents of configMap, secret, downwardAPI and projected volumes
// change while containers read them, and a reader must never see half of
// an update: the files go into a fresh hidden directory, and one rename
// makes it current, the kubelet's layout:
//
//	<volume>/..2026_11_26_02_54_23.000000001/  the files, as of one update
//	<volume>/..data -> ..2026_11_26_02_54_23.000000001
//	<volume>/<top-level name> -> ..data/<top-level name>
//
// A reader that resolves ..data once reads one whole set. A user-visible
// path goes through ..data, so it changes with the swap. Everything is
// written through an os.Root of the volume directory, so no path (an
// item's, a leftover symlink) leads a write out of it.

const (
	dataLink    = "..data"
	dataLinkTmp = "..data_tmp"
	// tsLayout names the timestamped directories; a sequence number after
	// it keeps two writes in one second apart.
	tsLayout = "..2006_01_02_15_04_05."
)

// file is one file of a volume's payload.
type file struct {
	data []byte
	mode os.FileMode
}

// payload maps a volume's relative paths to their files.
type payload map[string]file

// ownership says how the agent-written volume is owned: gid (-1: the
// agent's own) and the bits the kubelet adds for an fsGroup, read for the
// group on files, read, search and setgid on directories.
type ownership struct{ gid int }

func (o ownership) fileMode(m os.FileMode) os.FileMode {
	if o.gid >= 0 {
		return m | 0o440
	}
	return m
}

func (o ownership) dirMode() os.FileMode {
	if o.gid >= 0 {
		return 0o755 | 0o550 | os.ModeSetgid
	}
	return 0o755
}

// checkPayloadPath refuses an item path that could name something outside
// the volume or the agent's own entries: it must be relative, without a
// ".." component, and not start with "..".
func checkPayloadPath(p string) error {
	switch {
	case p == "":
		return errors.New("path is empty")
	case path.IsAbs(p):
		return fmt.Errorf("path %q must be relative", p)
	case len(p) > 4096:
		return fmt.Errorf("path %q is longer than 4096 bytes", p[:64]+"...")
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("path %q must not start with \"..\"", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q holds a NUL byte", p)
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return fmt.Errorf("path %q must not contain \"..\"", p)
		}
		if len(c) > 255 {
			return fmt.Errorf("path %q has a component longer than 255 bytes", p)
		}
	}
	if path.Clean(p) == "." {
		return fmt.Errorf("path %q names the volume itself", p)
	}
	return nil
}

// writeAtomic makes the volume directory root hold exactly want, and
// reports whether it wrote anything: an unchanged payload (the common case
// at every sync) costs reads only.
func writeAtomic(root *os.Root, want payload, own ownership) (bool, error) {
	clean := make(payload, len(want))
	for p, f := range want {
		if err := checkPayloadPath(p); err != nil {
			return false, fmt.Errorf("%w: %w", err, ErrInvalidMount)
		}
		clean[path.Clean(p)] = f
	}
	old, _ := root.Readlink(dataLink)
	if old != "" && current(root, old, clean, own) {
		return false, nil
	}
	ts, err := newTimestampDir(root, own)
	if err != nil {
		return false, err
	}
	if err := writeFiles(root, ts, clean, own); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	_ = root.Remove(dataLinkTmp) // a leftover of a write that died here
	if err := symlink(root, ts, dataLinkTmp, own); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	if err := root.Rename(dataLinkTmp, dataLink); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	top := topLevel(clean)
	for name := range top {
		if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			if err := symlink(root, path.Join(dataLink, name), name, own); err != nil {
				return true, err
			}
		}
	}
	// What the previous payloads left: user-visible links no longer in
	// it, and every timestamped directory but the current one.
	entries, err := readDirNames(root)
	if err != nil {
		return true, err
	}
	for _, name := range entries {
		switch {
		case name == dataLink || name == ts:
		case strings.HasPrefix(name, ".."):
			if err := root.RemoveAll(name); err != nil {
				return true, err
			}
		case !top[name]:
			if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				if err := root.Remove(name); err != nil {
					return true, err
				}
			}
		}
	}
	return true, nil
}

// current tells whether the data directory dir already holds exactly
// want, with the same modes and group, and every top-level link is there.
func current(root *os.Root, dir string, want payload, own ownership) bool {
	n := 0
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		n++
		f, ok := want[strings.TrimPrefix(p, dir+"/")]
		if !ok || !d.Type().IsRegular() {
			return errStale
		}
		info, err := d.Info()
		if err != nil || info.Mode() != own.fileMode(f.mode) || (own.gid >= 0 && fileGID(info) != own.gid) ||
			info.Size() != int64(len(f.data)) {
			return errStale
		}
		got, err := root.ReadFile(p)
		if err != nil || !bytes.Equal(got, f.data) {
			return errStale
		}
		return nil
	})
	if err != nil || n != len(want) {
		return false
	}
	for name := range topLevel(want) {
		if target, err := root.Readlink(name); err != nil || target != path.Join(dataLink, name) {
			return false
		}
	}
	return true
}

var errStale = errors.New("stale")

// tsSeq tells apart directories made within one second.
var tsSeq atomic.Uint64

// newTimestampDir creates a fresh hidden directory for one write.
func newTimestampDir(root *os.Root, own ownership) (string, error) {
	for range 100 {
		name := time.Now().UTC().Format(tsLayout) + strconv.FormatUint(tsSeq.Add(1), 10)
		err := root.Mkdir(name, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, setDir(root, name, own)
	}
	return "", errors.New("no fresh name for a data directory")
}

// symlink makes a link the fsGroup's too, as the kubelet's walk leaves
// every entry of the volume.
func symlink(root *os.Root, target, name string, own ownership) error {
	if err := root.Symlink(target, name); err != nil {
		return err
	}
	if own.gid >= 0 {
		return root.Lchown(name, -1, own.gid)
	}
	return nil
}

// setDir gives a directory the agent made its group and mode (mkdir's
// mode is cut by the umask).
func setDir(root *os.Root, name string, own ownership) error {
	if own.gid >= 0 {
		if err := root.Lchown(name, -1, own.gid); err != nil {
			return err
		}
	}
	return root.Chmod(name, own.dirMode())
}

func writeFiles(root *os.Root, ts string, files payload, own ownership) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := makeDirs(root, ts, path.Dir(p), own); err != nil {
			return err
		}
		if err := writeFile(root, path.Join(ts, p), files[p], own); err != nil {
			return err
		}
	}
	return nil
}

// makeDirs creates the directories of rel beneath ts.
func makeDirs(root *os.Root, ts, rel string, own ownership) error {
	if rel == "." {
		return nil
	}
	dir := ts
	for _, c := range strings.Split(rel, "/") {
		dir = path.Join(dir, c)
		err := root.Mkdir(dir, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := setDir(root, dir, own); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(root *os.Root, name string, f file, own ownership) error {
	w, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, bytes.NewReader(f.data))
	if err == nil && own.gid >= 0 {
		err = w.Chown(-1, own.gid)
	}
	if err == nil {
		// After the chown, which clears setuid and setgid bits.
		err = w.Chmod(own.fileMode(f.mode))
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// topLevel is the set of first components of the payload's paths: the
// user-visible links.
func topLevel(p payload) map[string]bool {
	top := make(map[string]bool, len(p))
	for k := range p {
		first, _, _ := strings.Cut(k, "/")
		top[first] = true
	}
	return top
}

func readDirNames(root *os.Root) ([]string, error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
