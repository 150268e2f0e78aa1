package localapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrSocketInUse is returned by Run when another process answers on the
// socket path: two agents must not share one state directory.
var ErrSocketInUse = errors.New("another process serves on the socket")

// listen creates the unix socket at path with mode 0600, replacing a stale
// socket left by a process that died. It refuses to replace anything but a
// socket, or a socket someone still serves on.
func listen(path string) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("local API socket %s: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	// The umask is process-wide, so the mode is set right after the bind;
	// the parent directory (0750 or stricter) covers the moment between.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("local API socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close() // the chmod error is the one to report
		return nil, fmt.Errorf("local API socket %s: %w", path, err)
	}
	return l, nil
}

func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("local API socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("local API socket %s: exists and is not a socket; not replacing it", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close() // it answered: that is all this dial asked
		return fmt.Errorf("local API socket %s: %w", path, ErrSocketInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local API socket %s: checking whether it is stale: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local API socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}
