package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// checkHostPath applies a hostPath volume's type to its path, creating the
// path for the ...OrCreate types, and returns the path.
func checkHostPath(name string, hp *corev1.HostPathVolumeSource) (string, error) {
	path := filepath.Clean(hp.Path)
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("volume %q: hostPath %q is not absolute: %w", name, hp.Path, ErrHostPathType)
	}
	typ := corev1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	fi, err := os.Stat(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return "", fmt.Errorf("volume %q: hostPath %s: %w", name, path, err)
	}
	fail := func(want string) error {
		if missing {
			return fmt.Errorf("volume %q: hostPath %s does not exist, want %s: %w", name, path, want, ErrHostPathType)
		}
		return fmt.Errorf("volume %q: hostPath %s is a %s, want %s: %w", name, path, kind(fi.Mode()), want, ErrHostPathType)
	}
	switch typ {
	case corev1.HostPathUnset:
		return path, nil
	case corev1.HostPathDirectoryOrCreate:
		if missing {
			if err := os.MkdirAll(path, 0o755); err != nil { // #nosec G301 -- DirectoryOrCreate makes 0755, as the kubelet does
				return "", fmt.Errorf("volume %q: creating %s: %w", name, path, err)
			}
			return path, nil
		}
		if !fi.IsDir() {
			return "", fail("a directory")
		}
	case corev1.HostPathDirectory:
		if missing || !fi.IsDir() {
			return "", fail("a directory")
		}
	case corev1.HostPathFileOrCreate:
		if missing {
			if err := createFile(path); err != nil {
				return "", fmt.Errorf("volume %q: creating %s: %w", name, path, err)
			}
			return path, nil
		}
		if !fi.Mode().IsRegular() {
			return "", fail("a file")
		}
	case corev1.HostPathFile:
		if missing || !fi.Mode().IsRegular() {
			return "", fail("a file")
		}
	case corev1.HostPathSocket:
		if missing || fi.Mode()&fs.ModeSocket == 0 {
			return "", fail("a socket")
		}
	case corev1.HostPathCharDev:
		if missing || fi.Mode()&fs.ModeCharDevice == 0 {
			return "", fail("a character device")
		}
	case corev1.HostPathBlockDev:
		if missing || fi.Mode()&fs.ModeDevice == 0 || fi.Mode()&fs.ModeCharDevice != 0 {
			return "", fail("a block device")
		}
	default:
		return "", fmt.Errorf("volume %q: hostPath type %q: %w", name, typ, ErrUnsupportedVolume)
	}
	return path, nil
}

// createFile creates an empty file (0644) and its parent directories.
func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // #nosec G301 -- FileOrCreate parents are 0755, as the kubelet makes them
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644) // #nosec G302 G304 -- FileOrCreate makes 0644 at the pod's own hostPath, as the kubelet does
	if errors.Is(err, fs.ErrExist) {
		return nil // created meanwhile
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "file"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}
