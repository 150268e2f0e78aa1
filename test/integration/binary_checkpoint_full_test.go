package integration

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// The checkpoint's disk fills up: its writes fail, the pods run on, the
// local API's health names the problem and the failures are counted; once
// there is room again, the retried write lands and the problem clears.
func TestBinaryCheckpointWriteFailureIsRetriedAndReported(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs for the checkpoint: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", disk).Run() })

	h := newAgent(t, "--checkpoint-file", filepath.Join(disk, "checkpoint.db"))
	h.writeManifest(testPod("before", shContainer("main", sleepForever)))
	h.waitPod("before", "running", 60*time.Second, runningContainer("main"))

	// Fill the disk, then ask for records larger than what is left.
	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(f, io.LimitReader(zeros{}, 2<<20)) // stops at ENOSPC
	f.Close()
	for i := range 3 {
		pod := testPod("big-"+strconv.Itoa(i), shContainer("main", sleepForever))
		pod.Annotations = map[string]string{"padding": strings.Repeat("x", 200<<10)}
		h.writeManifest(pod)
	}
	for i := range 3 {
		h.waitPod("big-"+strconv.Itoa(i), "running while its checkpoint record cannot be written", 60*time.Second, runningContainer("main"))
	}
	var problems []string
	deadline := time.Now().Add(30 * time.Second)
	for len(problems) == 0 {
		health, err := h.client.Health(context.Background())
		if err == nil {
			problems = health.Problems
		}
		if time.Now().After(deadline) {
			t.Fatalf("the health reports no problem while the checkpoint's disk is full: %+v, %v", health, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(problems[0], "checkpoint") || !strings.Contains(problems[0], "not written") {
		t.Errorf("health problems = %q, want the checkpoint's writes named", problems)
	}
	if n := h.metric(t, "nodeagent_checkpoint_write_failures_total"); n < 1 {
		t.Errorf("write failures counted: %v, want at least 1", n)
	}
	t.Logf("with the disk full: %q", problems)

	// Room again: the retry writes what waited, and the problem clears.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		health, err := h.client.Health(context.Background())
		if err == nil && len(health.Problems) == 0 && h.metric(t, "nodeagent_checkpoint_pending_changes") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint problem did not clear within 30s of the disk freed: %+v, %v", health, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// What was written is what the next start finds: every pod adopted.
	before := map[string]string{}
	for _, name := range []string{"before", "big-0", "big-1", "big-2"} {
		before[name] = h.runningIDs(name)["main"]
	}
	h.kill9()
	h.start()
	for name, id := range before {
		h.waitPod(name, "adopted after a restart", 60*time.Second, func(p localapi.Pod) bool {
			return runningContainer("main")(p) && p.Restored
		})
		if now := h.runningIDs(name)["main"]; now != id {
			t.Errorf("pod %s: running %s after the restart, want %s kept", name, now, id)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var metricLine = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$`)

// metric returns the sum of a metric's samples on the agent's /metrics.
func (h *agentHarness) metric(t *testing.T, name string) float64 { return h.metricWith(t, name) }
