package exitwatch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// child starts a process that waits to be killed, and a fake procfs in
// which its cgroup is cgroup.
func child(t *testing.T, proc, cgroup string, argv ...string) *exec.Cmd {
	t.Helper()
	if len(argv) == 0 {
		argv = []string{"sleep", "600"}
	}
	cmd := exec.Command(argv[0], argv[1:]...) // #nosec G204 -- the tests' own commands
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	dir := filepath.Join(proc, strconv.Itoa(cmd.Process.Pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644); err != nil {
		t.Fatal(err)
	}
	return cmd
}

type harness struct {
	w      *Watcher
	exited chan string
	cancel context.CancelFunc
	done   chan struct{}
}

func start(t *testing.T, proc string, pids map[string]int) *harness {
	t.Helper()
	h := &harness{exited: make(chan string, 10), done: make(chan struct{})}
	var err error
	h.w, err = New(Options{
		ProcRoot: proc,
		PID: func(_ context.Context, id string) (int, error) {
			if pid, ok := pids[id]; ok {
				return pid, nil
			}
			return 0, errors.New("no such container")
		},
		Exited: func(id string) { h.exited <- id },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		_ = h.w.Run(ctx)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		h.w.mu.Lock()
		running := h.w.ctx != nil
		h.w.mu.Unlock()
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not begin")
		}
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.cancel()
	<-h.done
}

func (h *harness) expectExit(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-h.exited:
		if got != id {
			t.Fatalf("Exited(%q), want %q", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit reported for %s", id)
	}
}

func (h *harness) expectNoExit(t *testing.T) {
	t.Helper()
	select {
	case got := <-h.exited:
		t.Fatalf("Exited(%q) reported, want none", got)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestExitOfAWatchedProcessIsReported(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "4:memory:/nodeagent/podabc/c1\n")
	h := start(t, proc, map[string]int{"c1": cmd.Process.Pid})
	h.w.Watch("c1")
	h.w.Watch("c1") // a second Watch of the same container is a no-op
	h.expectNoExit(t)
	if !h.w.Watched("c1") {
		t.Fatal("Watched(c1) = false while its process is waited on")
	}
	if n := h.w.watching(); n != 1 {
		t.Fatalf("watching() = %d, want 1", n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.expectExit(t, "c1")
	if h.w.Watched("c1") {
		t.Fatal("Watched(c1) = true once its process exited")
	}
	// Exited until Retain drops it: never watched again.
	h.w.Watch("c1")
	h.expectNoExit(t)
	h.w.Retain(func(string) bool { return false })
	if n := h.w.watching(); n != 0 {
		t.Fatalf("watching() = %d after Retain, want 0", n)
	}
}

// The exits of a process's children (a shell's commands) are not its own:
// no exit is reported until it does exit.
func TestAForkIsNotAnExit(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "c9", "sh", "-c", "for i in 1 2 3 4 5; do sleep 0.05; done; sleep 600")
	h := start(t, proc, map[string]int{"c9": cmd.Process.Pid})
	h.w.Watch("c9")
	waitFor(t, func() bool { return opened(h.w, "c9") })
	select {
	case id := <-h.exited:
		t.Fatalf("Exited(%q) while the process forks children", id)
	case <-time.After(500 * time.Millisecond):
	}
	_ = cmd.Process.Kill()
	h.expectExit(t, "c9")
}

func TestAProcessGoneBeforeTheWatchIsReportedExited(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "c2")
	pid := cmd.Process.Pid
	_ = cmd.Process.Kill()
	_ = cmd.Wait() // reaped: pidfd_open finds no such process
	h := start(t, proc, map[string]int{"c2": pid})
	h.w.Watch("c2")
	h.expectExit(t, "c2")
}

func TestRetainEndsAWatchWithoutAnExit(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "c3")
	h := start(t, proc, map[string]int{"c3": cmd.Process.Pid})
	h.w.Watch("c3")
	waitFor(t, func() bool { return opened(h.w, "c3") })
	h.w.Retain(func(id string) bool { return id != "c3" })
	_ = cmd.Process.Kill()
	h.expectNoExit(t)
	if n := h.w.watching(); n != 0 {
		t.Fatalf("watching() = %d, want 0", n)
	}
}

func TestAProcessOutsideTheContainersCgroupTurnsTheWatcherOff(t *testing.T) {
	proc := t.TempDir()
	// The runtime's PID names a process of some other cgroup: another PID
	// namespace than the runtime's.
	cmd := child(t, proc, "4:memory:/user.slice\n")
	other := child(t, proc, "c5")
	h := start(t, proc, map[string]int{"c4": cmd.Process.Pid, "c5": other.Process.Pid})
	h.w.Watch("c4")
	waitFor(t, func() bool {
		h.w.mu.Lock()
		defer h.w.mu.Unlock()
		return h.w.off != ""
	})
	h.w.Watch("c5")
	if n := h.w.watching(); n != 0 {
		t.Fatalf("watching() = %d once off, want 0", n)
	}
	_ = cmd.Process.Kill()
	_ = other.Process.Kill()
	h.expectNoExit(t)
}

func TestAWatchBeforeRunBeginsWithRun(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "c8")
	exited := make(chan string, 1)
	w, err := New(Options{
		ProcRoot: proc,
		PID:      func(context.Context, string) (int, error) { return cmd.Process.Pid, nil },
		Exited:   func(id string) { exited <- id },
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("c8")
	runUntilCleanup(t, w)
	waitFor(t, func() bool { return opened(w, "c8") })
	_ = cmd.Process.Kill()
	select {
	case id := <-exited:
		if id != "c8" {
			t.Fatalf("Exited(%q), want c8", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit reported for a container watched before Run")
	}
}

// A PID that names a process of another cgroup, while the runtime no
// longer gives that PID for the container (it exited, and the PID went to
// another process), turns nothing off.
func TestAStalePIDDoesNotTurnTheWatcherOff(t *testing.T) {
	proc := t.TempDir()
	other := child(t, proc, "4:memory:/user.slice\n")
	calls := 0
	exited := make(chan string, 1)
	w, err := New(Options{
		ProcRoot: proc,
		PID: func(context.Context, string) (int, error) {
			calls++
			if calls == 1 {
				return other.Process.Pid, nil
			}
			return 0, errors.New("container not running")
		},
		Exited: func(id string) { exited <- id },
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, w)
	w.Watch("c10")
	waitFor(t, func() bool {
		wt := w.lookup("c10")
		if wt == nil {
			return false
		}
		wt.mu.Lock()
		defer wt.mu.Unlock()
		return wt.closed
	})
	if w.Off() {
		t.Fatal("a stale PID turned the watcher off")
	}
}

func TestAFailedPIDLookupIsNotAnExit(t *testing.T) {
	h := start(t, t.TempDir(), nil)
	h.w.Watch("unknown")
	h.expectNoExit(t)
}

func TestRunEndsEveryWatch(t *testing.T) {
	proc := t.TempDir()
	cmd := child(t, proc, "c6")
	h := start(t, proc, map[string]int{"c6": cmd.Process.Pid})
	h.w.Watch("c6")
	waitFor(t, func() bool { return opened(h.w, "c6") })
	h.stop() // returns only once the watch's goroutine has: goleak checks none is left
	h.w.Watch("c7")
	if n := h.w.watching(); n != 1 {
		t.Fatalf("watching() = %d after Run, want the one from before", n)
	}
}

func TestNewRequiresPIDAndExited(t *testing.T) {
	if _, err := New(Options{PID: func(context.Context, string) (int, error) { return 0, nil }}); err == nil {
		t.Fatal("New without Exited: no error")
	}
}

func opened(w *Watcher, id string) bool {
	wt := w.lookup(id)
	if wt == nil {
		return false
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return wt.file != nil
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// runUntilCleanup runs w until the test ends.
func runUntilCleanup(t *testing.T, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}
