package eviction

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// memoryNotifier asks the kernel to say when a cgroup's memory usage
// crosses a bound (cgroup v1's memory thresholds: an eventfd registered
// in cgroup.event_control against memory.usage_in_bytes), and sends on
// crossed each time it does. The bound moves with the threshold and the
// cgroup's inactive file pages, so set registers it again when it
// changed. Under cgroup v2 the kernel has no such thresholds: new fails,
// and the manager polls only.
type memoryNotifier struct {
	dir     string
	log     logr.Logger
	crossed chan struct{}

	mu    sync.Mutex
	bound int64
	event *os.File // the eventfd of the current registration
	wg    sync.WaitGroup
}

func newMemoryNotifier(dir string, log logr.Logger) (*memoryNotifier, error) {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.event_control")); err != nil {
		return nil, fmt.Errorf("no memory thresholds in %s (cgroup v2?): %w", dir, err)
	}
	return &memoryNotifier{dir: dir, log: log, crossed: make(chan struct{}, 1)}, nil
}

// set makes bound (bytes of usage) the one the kernel watches.
func (n *memoryNotifier) set(bound int64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if bound == n.bound && n.event != nil {
		return nil
	}
	n.stopLocked()
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	event := os.NewFile(uintptr(fd), "eviction-memory-threshold") // non-blocking: its Read waits in the poller, and Close ends it
	usage, err := os.Open(filepath.Join(n.dir, "memory.usage_in_bytes"))
	if err != nil {
		_ = event.Close() // never registered: nothing to undo
		return err
	}
	defer usage.Close() // the kernel holds the registration by the eventfd alone
	control := filepath.Join(n.dir, "cgroup.event_control")
	line := fmt.Sprintf("%d %d %d", fd, usage.Fd(), bound)
	if err := os.WriteFile(control, []byte(line), 0); err != nil { // #nosec G306 -- a cgroup control file, written, never created
		_ = event.Close() // never registered: nothing to undo
		return fmt.Errorf("registering a memory threshold in %s: %w", control, err)
	}
	n.bound, n.event = bound, event
	n.wg.Add(1)
	go n.read(event)
	return nil
}

// read sends on crossed for every notification of event, until it is
// closed.
func (n *memoryNotifier) read(event *os.File) {
	defer n.wg.Done()
	buf := make([]byte, 8)
	for {
		if _, err := event.Read(buf); err != nil {
			if !errors.Is(err, os.ErrClosed) {
				n.log.V(1).Info("Memory threshold notifications ended", "err", err.Error())
			}
			return
		}
		if binary.NativeEndian.Uint64(buf) == 0 {
			continue
		}
		select {
		case n.crossed <- struct{}{}:
		default: // one pending notification is enough
		}
	}
}

func (n *memoryNotifier) stopLocked() {
	if n.event != nil {
		_ = n.event.Close() // closing the eventfd is what ends the registration
		n.event = nil
	}
}

// close ends the registration and waits for its reader.
func (n *memoryNotifier) close() {
	n.mu.Lock()
	n.stopLocked()
	n.mu.Unlock()
	n.wg.Wait()
}
