package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A container's log, as the runtime writes it (the CRI format the kubelet
// reads): <podLogDir>/<namespace>_<pod>_<uid>/<container>/<restart>.log,
// one file per instance, each line "<RFC3339Nano time> <stream> <P|F>
// <text>", where P marks a part of a longer line.

// podLogDir is a pod's log directory.
func podLogDir(root, namespace, name, uid string) string {
	return filepath.Join(root, namespace+"_"+name+"_"+uid)
}

// instanceLogs lists a container's log files, oldest instance first.
func instanceLogs(dir, container string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, container))
	if err != nil {
		return nil, err
	}
	type file struct {
		n    int
		path string
	}
	var files []file
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log"))
		if err == nil && strings.HasSuffix(e.Name(), ".log") && e.Type().IsRegular() {
			files = append(files, file{n, filepath.Join(dir, container, e.Name())})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].n < files[j].n })
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

// logLine is one line of a container's output.
type logLine struct {
	time   time.Time
	stream string
	text   string
}

// maxLogLine bounds one line of a log file; the runtime splits longer
// output into parts well below it.
const maxLogLine = 1 << 20

// lineReader joins a log file's partial lines into whole ones. It keeps
// what it read of a line not yet ended, so a followed file can grow.
type lineReader struct {
	r       io.Reader
	buf     []byte
	chunk   []byte
	partial strings.Builder
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, chunk: make([]byte, 32<<10)}
}

// next returns the next whole line, or io.EOF when the file has no whole
// line more (yet).
func (l *lineReader) next() (logLine, error) {
	for {
		raw, err := l.readRaw()
		if err != nil {
			return logLine{}, err
		}
		ts, rest, _ := strings.Cut(raw, " ")
		stream, rest, _ := strings.Cut(rest, " ")
		tag, text, _ := strings.Cut(rest, " ")
		t, _ := time.Parse(time.RFC3339Nano, ts)
		if tag == "P" && l.partial.Len() < maxLogLine {
			l.partial.WriteString(text)
			continue
		}
		if l.partial.Len() > 0 {
			text = l.partial.String() + text
			l.partial.Reset()
		}
		return logLine{time: t, stream: stream, text: text}, nil
	}
}

func (l *lineReader) readRaw() (string, error) {
	for {
		if i := bytes.IndexByte(l.buf, '\n'); i >= 0 {
			line := string(l.buf[:i])
			l.buf = l.buf[i+1:]
			return line, nil
		}
		if len(l.buf) >= maxLogLine { // an overlong line, cut
			line := string(l.buf)
			l.buf = nil
			return line, nil
		}
		n, err := l.r.Read(l.chunk)
		l.buf = append(l.buf, l.chunk[:n]...)
		if n == 0 && err == nil {
			err = io.EOF
		}
		if n == 0 || (err != nil && err != io.EOF) {
			return "", err
		}
	}
}

// tailLines returns the last n lines of a log file (all when n < 0).
func tailLines(path string, n int) ([]logLine, error) {
	f, err := os.Open(path) // #nosec G304 -- a log file under the pod log directory
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := newLineReader(f)
	var out []logLine
	for {
		line, err := lr.next()
		if err != nil {
			break
		}
		out = append(out, line)
		if n >= 0 && len(out) > n {
			out = out[1:]
		}
	}
	return out, nil
}

func formatLine(line logLine, timestamps bool) string {
	if timestamps {
		return line.time.Format(time.RFC3339Nano) + " " + line.text
	}
	return line.text
}

// lastLogLines returns the last n lines of a container's newest instance,
// indented, or "" when there is no log to show.
func (c *cli) lastLogLines(p localapi.Pod, container string, n int) string {
	if container == "" && len(p.Containers) > 0 {
		container = p.Containers[0].Name
	}
	files, err := instanceLogs(podLogDir(c.settings.PodLogDir, p.Namespace, p.Name, p.UID), container)
	if err != nil || len(files) == 0 {
		return ""
	}
	// The newest instance that wrote anything: a restarted container's
	// new instance may not have yet.
	var lines []logLine
	for i := len(files) - 1; i >= 0 && len(lines) == 0; i-- {
		lines, _ = tailLines(files[i], n)
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l.text)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
