package host

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// maxFile bounds a file read from /proc, /sys or /etc.
const maxFile = 1 << 20

// ReadSmall reads a host file of bounded size. The buffer grows with what
// is read: the files read every status period are a few KiB.
func ReadSmall(path string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- a fixed host file under /proc, /sys or /etc
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// FirstLine is the file's first line, trimmed; "" if it cannot be read.
func FirstLine(path string) string {
	b, err := ReadSmall(path)
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// ReadMeminfo returns the fields of a /proc/meminfo, in bytes.
func ReadMeminfo(path string) (map[string]int64, error) {
	b, err := ReadSmall(path)
	if err != nil {
		return nil, fmt.Errorf("reading the memory size: %w", err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[key] = v
	}
	return out, nil
}
