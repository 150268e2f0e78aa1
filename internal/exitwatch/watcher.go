package exitwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// pidTimeout bounds the runtime's answer to one PID lookup.
const pidTimeout = 5 * time.Second

// maxCgroupFile bounds the read of /proc/<pid>/cgroup.
const maxCgroupFile = 64 << 10

// Options configure a Watcher. PID and Exited are required.
type Options struct {
	// PID returns the host PID of a running container's first process.
	PID func(ctx context.Context, containerID string) (int, error)
	// Exited is called, from the watch's own goroutine, when the
	// container's process has exited, or was found gone as the watch began.
	Exited func(containerID string)
	// ProcRoot is where procfs is mounted (default /proc).
	ProcRoot string
	Logger   logr.Logger
}

// ErrInvalidOptions is wrapped by New's error for Options that cannot work.
var ErrInvalidOptions = errors.New("invalid exit watch options")

// validate reports every missing option at once, each wrapping
// ErrInvalidOptions and naming the field.
func (o Options) validate() error {
	var errs []error
	if o.PID == nil {
		errs = append(errs, fmt.Errorf("%w: PID is required", ErrInvalidOptions))
	}
	if o.Exited == nil {
		errs = append(errs, fmt.Errorf("%w: Exited is required", ErrInvalidOptions))
	}
	return errors.Join(errs...)
}

// Watcher watches the processes of running containers. It is safe for
// concurrent use.
type Watcher struct {
	opts Options
	log  logr.Logger

	mu sync.Mutex
	// ctx is Run's while it runs; ended is set when it returns.
	ctx   context.Context
	ended bool
	// pending are the containers Watch was given before Run began.
	pending []string
	// watches holds every container a watch was begun for and not retired:
	// a watch ends when its process exits, but the container stays here
	// until Retain drops it, so that it is never watched twice.
	watches map[string]*watch
	// off is why the Watcher stopped watching, if it did.
	off string
	wg  sync.WaitGroup
}

// watch is one container's: its pidfd once open, closed to end the wait.
type watch struct {
	mu     sync.Mutex
	file   *os.File
	closed bool
	// waiting: the pidfd is open, proven the container's, and waited on.
	waiting bool
}

// New returns a Watcher; Run serves it.
func New(opts Options) (*Watcher, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Watcher{opts: opts, log: opts.Logger.WithName("exitwatch"), watches: map[string]*watch{}}, nil
}

// Run lets Watch begin watches until ctx ends; then it ends them all and
// returns nil once their goroutines have returned.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	for _, id := range w.pending {
		w.begin(id)
	}
	w.pending = nil
	w.mu.Unlock()
	<-ctx.Done()
	w.mu.Lock()
	w.ctx, w.ended = nil, true
	for _, wt := range w.watches {
		wt.close()
	}
	w.mu.Unlock()
	w.wg.Wait()
	return nil
}

// Watch begins watching each container of ids not watched yet. It returns
// at once; the PID lookup and the wait happen in the watch's goroutine.
// Containers given before Run are watched once it begins; after Run, or
// once the Watcher is off, it does nothing.
func (w *Watcher) Watch(ids ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.off != "" {
		return
	}
	for _, id := range ids {
		if w.ctx == nil {
			w.pending = append(w.pending, id)
			continue
		}
		w.begin(id)
	}
}

// begin starts the watch of id unless there is one; w.mu is held.
func (w *Watcher) begin(id string) {
	if _, ok := w.watches[id]; ok {
		return
	}
	wt := &watch{}
	w.watches[id] = wt
	w.wg.Add(1)
	go w.run(w.ctx, id, wt)
}

// Retain ends the watches of the containers keep says no to.
func (w *Watcher) Retain(keep func(id string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, wt := range w.watches {
		if !keep(id) {
			wt.close()
			delete(w.watches, id)
		}
	}
}

// Watched reports whether the container's process is being waited on:
// its exit, if it comes, is reported within milliseconds.
func (w *Watcher) Watched(id string) bool {
	wt := w.lookup(id)
	if wt == nil {
		return false
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return wt.waiting && !wt.closed
}

// lookup returns the watch of a container, if any.
func (w *Watcher) lookup(id string) *watch {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watches[id]
}

// Off reports whether the Watcher was turned off.
func (w *Watcher) Off() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off != ""
}

// watching reports how many containers are watched.
func (w *Watcher) watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watches)
}

func (w *Watcher) run(ctx context.Context, id string, wt *watch) {
	defer w.wg.Done()
	// The watch stays "waiting" until the exit is reported, so that no
	// one asking in between sees the process neither watched nor exited.
	defer wt.setWaiting(false)
	exited, err := w.wait(ctx, id, wt)
	switch {
	case exited:
		w.opts.Exited(id)
	case err != nil && ctx.Err() == nil:
		w.log.V(1).Info("not watching the container's process; its exit is noticed at the next relist", "container", id, "reason", err.Error())
	}
}

// errClosed: the watch was ended before its process exited.
var errClosed = errors.New("watch ended")

// wait opens the container's pidfd and waits until it is readable (the
// process exited: exited is true) or the watch is closed.
func (w *Watcher) wait(ctx context.Context, id string, wt *watch) (exited bool, err error) {
	pid, err := w.pid(ctx, id)
	if err != nil {
		return false, err
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	switch {
	case errors.Is(err, unix.ESRCH):
		return true, nil // gone already
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM):
		// The kernel (before 5.10) or a seccomp filter has no pidfds.
		err = fmt.Errorf("pidfd_open: %w", err)
		w.TurnOff(err)
		return false, err
	case err != nil:
		return false, fmt.Errorf("pidfd_open(%d): %w", pid, err)
	}
	f := os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))
	if !wt.open(f) {
		_ = f.Close()
		return false, errClosed
	}
	defer wt.close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	// The pidfd pins the process it names; its cgroup must name the
	// container, or the runtime's PIDs are not this namespace's.
	if err := w.checkCgroup(pid, id); err != nil {
		if pidfdReadable(rc) {
			return true, nil // exited as it was checked: the check proves nothing
		}
		// A PID the runtime gave before its container exited, now some
		// other process's, proves nothing either: only the same PID, given
		// again for a container still running, turns the watch off.
		if again, perr := w.pid(ctx, id); perr != nil || again != pid {
			return false, err
		}
		w.TurnOff(err)
		return false, err
	}
	wt.setWaiting(true)
	// Each wake of the poller asks the pidfd again, so that no wake but
	// the exit's ends the wait.
	err = rc.Read(func(fd uintptr) bool {
		return readable(int(fd)) // #nosec G115 -- a file descriptor fits an int
	})
	if err != nil {
		return false, errClosed
	}
	return true, nil
}

// pid asks the runtime for the container's PID, within pidTimeout.
func (w *Watcher) pid(ctx context.Context, id string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, pidTimeout)
	defer cancel()
	pid, err := w.opts.PID(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("looking up its PID: %w", err)
	}
	if pid <= 0 {
		return 0, fmt.Errorf("the runtime gave no PID (%d)", pid)
	}
	return pid, nil
}

// pidfdReadable polls the pidfd without waiting, holding it open while it
// does: a concurrent close cannot hand its number to another file.
func pidfdReadable(rc syscall.RawConn) bool {
	r := false
	if err := rc.Control(func(fd uintptr) { r = readable(int(fd)) }); err != nil { // #nosec G115 -- a file descriptor fits an int
		return false
	}
	return r
}

// checkCgroup tells whether the process pid is in a cgroup that names the
// container, as every cgroup driver's path does.
func (w *Watcher) checkCgroup(pid int, id string) error {
	path := filepath.Join(w.opts.ProcRoot, strconv.Itoa(pid), "cgroup")
	f, err := os.Open(path) // #nosec G304 -- a procfs path built from a PID
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxCgroupFile))
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if !strings.Contains(string(b), id) {
		return fmt.Errorf("process %d, which the runtime gave as container %s's, is in no cgroup of that container: the agent does not share the runtime's PID namespace", pid, id)
	}
	return nil
}

// TurnOff stops all watching for good, with one line to say why: for a
// user that finds the PIDs the runtime gives are not this namespace's.
func (w *Watcher) TurnOff(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.off != "" {
		return
	}
	w.off = err.Error()
	w.log.Info("exit watch off: exits are noticed at the relist", "reason", w.off)
	for id, wt := range w.watches {
		wt.close()
		delete(w.watches, id)
	}
}

// readable polls fd without waiting.
func readable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}} // #nosec G115 -- a file descriptor fits an int32
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// open hands the watch its pidfd, unless it was closed already.
func (wt *watch) open(f *os.File) bool {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.closed {
		return false
	}
	wt.file = f
	return true
}

func (wt *watch) setWaiting(v bool) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.waiting = v
}

// close ends the wait on the pidfd and closes it; it may be called again.
func (wt *watch) close() {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.closed {
		return
	}
	wt.closed = true
	if wt.file != nil {
		_ = wt.file.Close()
	}
}
