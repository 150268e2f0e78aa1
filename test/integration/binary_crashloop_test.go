package integration

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// TestBinaryCrashLoop kills the agent with SIGKILL at random moments,
// during start-up, during syncs and during manifest changes, and starts it
// again, cycle after cycle. After each restart the agent must converge:
// for every manifest exactly one running container generation, of the
// manifest's current UID, in one sandbox; nothing of pods whose manifest is
// gone; and a checkpoint that reads back. NODEAGENT_CRASH_SEED and
// NODEAGENT_CRASH_CYCLES replay or lengthen a run.
func TestBinaryCrashLoop(t *testing.T) {
	cycles := 50
	if v, err := strconv.Atoi(os.Getenv("NODEAGENT_CRASH_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	seed := time.Now().UnixNano()
	if v, err := strconv.ParseInt(os.Getenv("NODEAGENT_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("crash loop: %d cycles, seed %d (NODEAGENT_CRASH_SEED=%d replays it)", cycles, seed, seed)
	rng := rand.New(rand.NewSource(seed))

	h := newAgent(t, "--housekeeping-interval", "500ms", "--relist-interval", "200ms", "--file-check-frequency", "2s")
	gen := 0
	writeA := func() {
		gen++
		pod := testPod("a", shContainer("main", sleepForever))
		pod.Spec.Containers[0].Env = []corev1.EnvVar{envVar("GEN", strconv.Itoa(gen))}
		h.writeManifest(pod)
	}
	cPresent := false
	toggleC := func() {
		if cPresent {
			h.removeManifest("c")
		} else {
			h.writeManifest(testPod("c", shContainer("main", sleepForever)))
		}
		cPresent = !cPresent
	}
	edit := func() string {
		if rng.Intn(2) == 0 {
			writeA()
			return "a changed"
		}
		toggleC()
		return "c toggled"
	}
	writeA()
	h.writeManifest(testPod("b", shContainer("main", sleepForever)))
	if violations, _ := h.converge(60 * time.Second); len(violations) > 0 {
		t.Fatalf("not converged before the first crash: %v", violations)
	}

	start := time.Now()
	var violations, edits int
	var slowest time.Duration
	for cycle := 1; cycle <= cycles; cycle++ {
		var steps []string
		h.kill9()
		h.start() // the agent starting up, after the previous cycle's restart
		if rng.Intn(3) == 0 {
			steps = append(steps, "start-up: "+edit())
			edits++
		}
		nap := time.Duration(rng.Intn(1500)) * time.Millisecond
		time.Sleep(nap)
		steps = append(steps, fmt.Sprintf("ran %v", nap))
		if rng.Intn(3) == 0 {
			steps = append(steps, "then "+edit())
			edits++
			time.Sleep(time.Duration(rng.Intn(500)) * time.Millisecond)
		}
		h.kill9()
		steps = append(steps, "kill -9")
		if err := readCheckpointCopy(t, filepath.Join(h.dir, "root", "checkpoint.db")); err != nil {
			violations++
			t.Errorf("cycle %d (%s): the checkpoint does not read back: %v", cycle, strings.Join(steps, ", "), err)
		}
		if rng.Intn(4) == 0 {
			steps = append(steps, "down: "+edit())
			edits++
		}
		h.start()
		began := time.Now()
		v, seen := h.converge(30 * time.Second)
		if len(v) > 0 {
			violations++
			t.Errorf("cycle %d (%s): not converged within 30s:\n  %s\n%s", cycle, strings.Join(steps, ", "), strings.Join(v, "\n  "), h.log(30))
		}
		took := time.Since(began)
		slowest = max(slowest, took)
		if took > 5*time.Second {
			t.Logf("cycle %d (%s): converged in %v; on the way: %s\n%s", cycle, strings.Join(steps, ", "), took.Round(10*time.Millisecond), strings.Join(seen, "; "), h.errorLines(6))
		}
	}
	t.Logf("crash loop: %d cycles (%d manifest changes) in %v, %d violations; slowest convergence %v; seed %d",
		cycles, edits, time.Since(start).Round(time.Second), violations, slowest.Round(10*time.Millisecond), seed)
}

// converge waits until the runtime and the agent agree with the manifests
// and stay so for half a second, and returns what still disagrees if they
// do not within timeout, and the last disagreement seen on the way.
func (h *agentHarness) converge(timeout time.Duration) (left, seen []string) {
	h.t.Helper()
	return h.convergeBy(timeout, h.divergence)
}

// convergeBy waits until check finds nothing and keeps finding nothing for
// half a second; it returns what check still finds after timeout, and the
// last finding on the way.
func (h *agentHarness) convergeBy(timeout time.Duration, check func() []string) (left, seen []string) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	var stableSince time.Time
	for {
		v := check()
		if len(v) > 0 {
			seen = v
		}
		switch {
		case len(v) > 0:
			stableSince = time.Time{}
		case stableSince.IsZero():
			stableSince = time.Now()
		case time.Since(stableSince) >= 500*time.Millisecond:
			return nil, seen
		}
		if time.Now().After(deadline) {
			return v, seen
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// divergence lists how the runtime and the agent differ from the manifests.
func (h *agentHarness) divergence() []string {
	want := map[string]string{} // full name -> UID
	entries, _ := os.ReadDir(h.manifests)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(h.manifests, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		pods, err := manifest.ParseManifest(data, manifest.ParseOptions{NodeName: h.node, Source: podtypes.FileSource, Origin: path})
		if err != nil || len(pods) != 1 {
			return []string{fmt.Sprintf("manifest %s: %v", e.Name(), err)}
		}
		want[pods[0].Name] = string(pods[0].UID)
	}
	var out []string
	byName := map[string]int{}
	for _, sb := range h.sandboxes("") {
		name := sb.GetMetadata().GetName()
		byName[name]++
		if _, ok := want[name]; !ok {
			out = append(out, fmt.Sprintf("sandbox %s of %s, which no manifest wants", shortID(sb.Id), name))
		}
	}
	pods, err := h.client.Pods(context.Background())
	if err != nil {
		return []string{fmt.Sprintf("local API: %v", err)}
	}
	for name, uid := range want {
		short := strings.TrimSuffix(name, "-"+h.node)
		if n := byName[name]; n != 1 {
			out = append(out, fmt.Sprintf("%s: %d sandboxes, want 1", name, n))
		}
		running := h.containers(short, true)
		if len(running) != 1 {
			out = append(out, fmt.Sprintf("%s: %d running containers, want 1", name, len(running)))
			continue
		}
		if got := running[0].Labels["io.kubernetes.pod.uid"]; got != uid {
			out = append(out, fmt.Sprintf("%s: the running container is of UID %s, want %s", name, got, uid))
		}
		i := slices.IndexFunc(pods, func(p localapi.Pod) bool { return p.Name == name && p.UID == uid })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s: the agent does not show UID %s", name, uid))
			continue
		}
		if c := findContainer(pods[i], "main"); c == nil || c.State != localapi.StateRunning || c.ContainerID != "containerd://"+running[0].Id {
			out = append(out, fmt.Sprintf("%s: the agent shows %+v, want container %s running", name, c, shortID(running[0].Id)))
		}
	}
	slices.Sort(out)
	return out
}

// readCheckpointCopy opens a copy of the checkpoint, as the next agent
// will open the file, and lists it: a copy, so that the test changes
// nothing the agent reads. A file moved aside as corrupt is an error.
func readCheckpointCopy(t *testing.T, path string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil // killed before it was first created
	} else if err != nil {
		return err
	}
	dir := t.TempDir()
	cp := filepath.Join(dir, "checkpoint.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		return err
	}
	store, err := checkpoint.Open(cp, checkpoint.Options{Logger: logr.Discard()})
	if err != nil {
		return err
	}
	defer store.Close()
	if aside, _ := filepath.Glob(cp + ".corrupt-*"); len(aside) > 0 {
		return fmt.Errorf("the file was unreadable and moved aside")
	}
	_, err = store.List()
	return err
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// errorLines returns the first n error lines of the current agent's log.
func (h *agentHarness) errorLines(n int) string {
	data, _ := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("agent-%d.log", h.starts)))
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if len(out) < n && (strings.HasPrefix(l, "E") || strings.Contains(l, "err=")) {
			out = append(out, "    "+l)
		}
	}
	return strings.Join(out, "\n")
}
