package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBinaryContainerLogRotation: a container writes 50 MiB to its log
// while the agent rotates at 1 MiB and keeps 3 files: the log directory
// never holds more than 3 files, old ones are compressed, and manifestctl
// logs still reads the current file to its last line.
//
// A file outgrows the maximum size by what the container writes between
// two checks (every 3 s here; the kubelet's rotation is checked the same
// way): at the pod's rate of at most 1.25 MiB a second, about 4 MiB with
// the runtime's line prefixes, so no file may pass 8 MiB.
func TestBinaryContainerLogRotation(t *testing.T) {
	h := newAgent(t, "--container-log-max-size=1Mi", "--container-log-max-files=3", "--container-log-monitor-interval=3s")
	m := newMctl(t, h)
	const line = "0123456789012345678901234567890123456789012345678901234567890ab" // 63 bytes and a newline
	// 400 chunks of 128 KiB: 50 MiB.
	h.writeManifest(testPod("chatty", shContainer("main",
		"i=0; while [ $i -lt 400 ]; do yes "+line+" | head -c 131072; sleep 0.1; i=$((i+1)); done; echo done-writing; "+sleepForever)))
	p := h.waitPod("chatty", "running", 30*time.Second, runningContainer("main"))
	dir := filepath.Join(h.dir, "logs", "default_"+h.podName("chatty")+"_"+p.UID, "main")

	const maxFiles, fileBound = 3, 8 << 20
	var most int
	var biggest int64
	var compressed bool
	deadline := time.Now().Add(4 * time.Minute)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				continue // a compression under way
			}
			n++
			compressed = compressed || strings.HasSuffix(e.Name(), ".gz")
			if fi, err := e.Info(); err == nil && !strings.HasSuffix(e.Name(), ".gz") {
				biggest = max(biggest, fi.Size())
			}
		}
		most = max(most, n)
		if n > maxFiles {
			t.Fatalf("%d files in the container's log directory, want at most %d: %v", n, maxFiles, names(entries))
		}
		if r := m.must(0, "logs", "chatty", "--tail", "1"); strings.TrimSpace(r.stdout) == "done-writing" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container did not finish writing within 4 minutes\n%s", h.log(30))
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !compressed {
		t.Errorf("no rotated log was compressed")
	}
	if biggest > fileBound {
		t.Errorf("a log file reached %d bytes, past the bound of %d", biggest, fileBound)
	}
	t.Logf("at most %d files, the biggest uncompressed one %d bytes", most, biggest)
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
