package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("meminfo", "MemTotal:        1000 kB\nMemFree:          100 kB\nMemAvailable:     600 kB\n")
	// busy: 100+20+30+5+5+40 ticks = 2 s; idle 900 and iowait 10 do not count.
	write("stat", "cpu  100 20 30 900 10 5 5 40 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
	now := time.Now()
	u, err := readUsage(hostFiles{proc: dir}, now)
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU != 2*time.Second || u.MemoryWorkingSet != 400<<10 || !u.Time.Equal(now) {
		t.Errorf("usage %+v, want CPU 2s, working set 400 KiB", u)
	}
	write("stat", "intr 1 2 3\n")
	if _, err := readUsage(hostFiles{proc: dir}, now); err == nil {
		t.Error("a stat file without a cpu line: no error")
	}
	if u, err := ReadUsage(); err != nil || u.CPU <= 0 || u.MemoryWorkingSet <= 0 {
		t.Errorf("this machine's usage: %+v %v", u, err)
	}
}
