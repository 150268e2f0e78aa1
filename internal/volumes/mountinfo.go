package volumes

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// maxMountinfo bounds what is read of /proc/self/mountinfo: far more than
// any node has mounts (a line is about 150 bytes).
const maxMountinfo = 32 << 20

// mountPoints lists the mount points of the agent's mount namespace that
// are dir or lie beneath it (dir must be a clean path with no symlink), as
// /proc/self/mountinfo names them, stacked mounts once each.
func mountPoints(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMountinfo+1))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/self/mountinfo: %w", err)
	}
	if len(data) > maxMountinfo {
		return nil, fmt.Errorf("/proc/self/mountinfo is larger than %d bytes", maxMountinfo)
	}
	return parseMountPoints(data, dir)
}

// parseMountPoints picks, from mountinfo lines, the mount points at or
// beneath dir. The fifth field is the mount point, with space, tab,
// newline and backslash written as octal escapes.
func parseMountPoints(data []byte, dir string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for line := range bytes.Lines(data) {
		fields := bytes.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp, err := unescapeMountinfo(string(fields[4]))
		if err != nil {
			return nil, fmt.Errorf("/proc/self/mountinfo: %w", err)
		}
		if (mp == dir || strings.HasPrefix(mp, dir+"/")) && !seen[mp] {
			seen[mp] = true
			out = append(out, mp)
		}
	}
	return out, nil
}

func unescapeMountinfo(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		n, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(n))
		i += 3
	}
	return b.String(), nil
}
