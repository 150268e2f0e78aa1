package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet's bounds on termination messages: what a container's file
// gives (its last 4 KiB), and what its log gives under
// FallbackToLogsOnError (the last 80 lines, at most their last 2 KiB).
// The pod-wide bound (12 KiB) is the status package's.
const (
	maxTerminationMessage     = 4 * 1024
	maxTerminationLogLines    = 80
	maxTerminationLogMessage  = 2 * 1024
	reasonContainerCannotRun  = "ContainerCannotRun"
	terminationMessageDirName = "containers"
)

// terminationMessageMount makes the file a container instance writes its
// termination message to, <PodsDir>/<uid>/containers/<name>/<random>, and
// returns its mount at the container's terminationMessagePath. Each
// instance gets a new file, so a restart starts with an empty message.
// The file is world-writable, as the kubelet makes it, so that the
// container's user may write it whoever it is; its directory is not, so
// nobody else on the node reaches it. Without PodsDir or a path: no mount.
func (r *Runtime) terminationMessageMount(pod *corev1.Pod, c *corev1.Container) (*Mount, error) {
	if r.opts.PodsDir == "" || c.TerminationMessagePath == "" {
		return nil, nil
	}
	dir := filepath.Join(r.opts.PodsDir, string(pod.UID), terminationMessageDirName, c.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("%w: termination message file: %w", ErrCreateContainer, err)
	}
	for range 3 {
		path := filepath.Join(dir, fmt.Sprintf("%08x", rand.Uint32()))        // #nosec G404 -- a file name unique in its directory, not a secret
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) // #nosec G304 -- PodsDir, a checked UID (SyncPod), a validated container name and a hex name
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: termination message file: %w", ErrCreateContainer, err)
		}
		// Chmod, not the create mode, which the umask would narrow.
		err = f.Chmod(0o666) // #nosec G302 -- written by the container's user, whoever it is, as under the kubelet
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("%w: termination message file: %w", ErrCreateContainer, err)
		}
		return &Mount{ContainerPath: c.TerminationMessagePath, HostPath: path, SELinuxRelabel: true}, nil
	}
	return nil, fmt.Errorf("%w: termination message file: no free name in %s", ErrCreateContainer, dir)
}

// terminationMessage is what an exited container's status says beyond
// the runtime's own message, as the kubelet has it: the content of the
// file mounted at its terminationMessagePath (its last 4 KiB) or, with
// FallbackToLogsOnError, a non-zero exit and an empty or missing file, the
// end of its log. Only files under PodsDir and logs under LogRoot are
// read: a status names the paths, and the agent made them there.
func (r *Runtime) terminationMessage(s *runtimeapi.ContainerStatus) string {
	a := s.GetAnnotations()
	fallback := corev1.TerminationMessagePolicy(a[AnnotationTerminationMessagePolicy]) == corev1.TerminationMessageFallbackToLogsOnError &&
		s.GetExitCode() != 0 && s.GetReason() != reasonContainerCannotRun
	var message string
	if path := a[AnnotationTerminationMessagePath]; path != "" && r.opts.PodsDir != "" {
		for _, m := range s.GetMounts() {
			if m.GetContainerPath() != path || !within(r.opts.PodsDir, m.GetHostPath()) {
				continue
			}
			data, err := readLast(m.GetHostPath(), maxTerminationMessage)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				return fmt.Sprintf("Error on reading termination log %s: %v", m.GetHostPath(), err)
			default:
				message = string(data)
			}
			break
		}
	}
	if message == "" && fallback && within(r.opts.LogRoot, s.GetLogPath()) {
		data, err := logTail(s.GetLogPath(), maxTerminationLogLines, maxTerminationLogMessage)
		if err != nil {
			return fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
		message = string(data)
	}
	return message
}

// within says whether path lies beneath dir.
func within(dir, path string) bool {
	return dir != "" && path != "" && strings.HasPrefix(filepath.Clean(path), filepath.Clean(dir)+string(filepath.Separator))
}

// openNoFollow opens a file to read, never through a symlink, and tells
// its size.
func openNoFollow(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0) // #nosec G304 -- a path beneath the agent's own directories (within)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readLast reads the last limit bytes of a file.
func readLast(path string, limit int64) ([]byte, error) {
	f, size, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(size-limit, 0)
	return io.ReadAll(io.NewSectionReader(f, off, size-off))
}

// logTail is what the last lines of a CRI log file ("<time> <stream>
// <tag> <content>" lines, tag P for a partial line) said, at most its last
// limit bytes: what `kubectl logs --tail` would show of them.
func logTail(path string, lines, limit int) ([]byte, error) {
	f, size, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read back from the end in blocks until lines+1 newlines are in
	// (the last line's own among them), or the whole file.
	const block = 16 * 1024
	var data []byte
	end := size
	for end > 0 && bytes.Count(data, []byte{'\n'}) <= lines {
		start := max(end-block, 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		data = append(buf, data...)
		end = start
	}
	raw := bytes.SplitAfter(data, []byte{'\n'})
	if n := len(raw); n > 0 && len(raw[n-1]) == 0 {
		raw = raw[:n-1]
	}
	if len(raw) > lines {
		raw = raw[len(raw)-lines:]
	}
	var out []byte
	for _, l := range raw {
		content, full, ok := parseCRILogLine(l)
		if !ok {
			continue // as the kubelet skips a line it cannot parse
		}
		out = append(out, content...)
		if full {
			out = append(out, '\n')
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// parseCRILogLine splits one line of a CRI log; full is false for a
// partial line (tag P), whose newline the runtime did not write.
func parseCRILogLine(l []byte) (content []byte, full, ok bool) {
	l = bytes.TrimSuffix(l, []byte{'\n'})
	fields := bytes.SplitN(l, []byte{' '}, 4)
	if len(fields) < 3 {
		return nil, false, false
	}
	if s := string(fields[1]); s != "stdout" && s != "stderr" {
		return nil, false, false
	}
	tag, _, _ := bytes.Cut(fields[2], []byte{':'})
	if len(fields) == 4 {
		content = fields[3]
	}
	return content, string(tag) != "P", true
}
