package integration

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/checkpoint/checkpointtest"
	"github.com/nodeagent/nodeagent/internal/localapi"
)

// The TestBinaryCheckpoint* tests crash the agent (SIGKILL) and start it
// again over the same state: the checkpoint under --root-dir and what runs
// in containerd.

// manifestServer serves a PodList on 127.0.0.1 for --manifest-url, and can
// be taken down (every request then fails with 503).
type manifestServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	pods []*corev1.Pod
	down bool
}

func newManifestServer(t *testing.T, pods ...*corev1.Pod) *manifestServer {
	m := &manifestServer{pods: pods}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *manifestServer) serve(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, p := range m.pods {
		list.Items = append(list.Items, *p)
	}
	data, err := yaml.Marshal(list)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(data)
}

func (m *manifestServer) set(down bool, pods ...*corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down, m.pods = down, pods
}

// Killed and started again with the same manifests: every container runs
// on, with the same ID; the pods are adopted.
func TestBinaryCheckpointKill9KeepsEveryContainer(t *testing.T) {
	h := newAgent(t)
	for _, name := range []string{"one", "two"} {
		h.writeManifest(testPod(name, shContainer("main", sleepForever), shContainer("side", sleepForever)))
	}
	before := map[string]map[string]string{}
	for _, name := range []string{"one", "two"} {
		h.waitPod(name, "running", 60*time.Second, func(p localapi.Pod) bool {
			return runningContainer("main")(p) && runningContainer("side")(p)
		})
		before[name] = h.runningIDs(name)
	}
	db := filepath.Join(h.dir, "root", "checkpoint.db")
	if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("checkpoint file %s: %v, %v; want mode 0600", db, fi, err)
	}

	h.kill9()
	h.start()
	for _, name := range []string{"one", "two"} {
		p := h.waitPod(name, "adopted", 60*time.Second, func(p localapi.Pod) bool {
			return runningContainer("main")(p) && runningContainer("side")(p)
		})
		if !p.Adopted || !p.Restored {
			t.Errorf("pod %s: adopted=%v restored=%v, want both", name, p.Adopted, p.Restored)
		}
	}
	time.Sleep(4 * time.Second) // relists, housekeeping, a resync
	for _, name := range []string{"one", "two"} {
		if now := h.runningIDs(name); !maps.Equal(now, before[name]) {
			t.Errorf("pod %s runs %v after the crash, want %v unchanged", name, now, before[name])
		}
		if sb := h.sandboxes(name); len(sb) != 1 {
			t.Errorf("pod %s has %d sandboxes after the crash, want 1", name, len(sb))
		}
	}
}

// The HTTP source is down when the agent comes back from a crash: its pods
// run on (adopted, from the checkpoint); with the runtime wiped as well,
// they are started again from the checkpoint; once the source answers
// without them, they are stopped and forgotten.
func TestBinaryCheckpointHTTPSourceDown(t *testing.T) {
	web := testPod("web", shContainer("main", sleepForever))
	srv := newManifestServer(t, web)
	h := newAgent(t, "--manifest-url", srv.srv.URL, "--http-check-frequency", "1s",
		"--housekeeping-interval", "500ms", "--relist-interval", "200ms")
	h.waitPod("web", "running", 60*time.Second, runningContainer("main"))
	before := h.runningIDs("web")

	h.kill9()
	srv.set(true, web)
	h.start()
	p := h.waitPod("web", "restored", 30*time.Second, runningContainer("main"))
	time.Sleep(4 * time.Second) // several housekeeping periods with the source down
	if now := h.runningIDs("web"); !maps.Equal(now, before) {
		t.Errorf("with the HTTP source down, the pod runs %v after the crash, want %v adopted", now, before)
	}
	if !p.Restored || !p.Adopted {
		t.Errorf("restored=%v adopted=%v, want both", p.Restored, p.Adopted)
	}

	// Crash again, and wipe the runtime while the agent is down.
	h.kill9()
	ctx := context.Background()
	for _, sb := range h.sandboxes("web") {
		h.cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
		if _, err := h.cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			t.Fatalf("wiping the runtime: %v", err)
		}
	}
	if left := h.containers("web", false); len(left) != 0 {
		t.Fatalf("the runtime still holds %d containers of web after the wipe", len(left))
	}
	h.start()
	p = h.waitPod("web", "started again from the checkpoint", 60*time.Second, runningContainer("main"))
	if !p.Restored || p.Adopted {
		t.Errorf("restored=%v adopted=%v, want restored and not adopted", p.Restored, p.Adopted)
	}
	if now := h.runningIDs("web"); len(now) != 1 || now["main"] == before["main"] {
		t.Errorf("running containers %v, want one new main", now)
	}

	// The source answers, without the pod: it wins over the checkpoint.
	srv.set(false)
	deadline := time.Now().Add(30 * time.Second)
	for len(h.sandboxes("web")) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := h.sandboxes("web"); len(left) > 0 {
		t.Fatalf("the HTTP source dropped web, yet %d sandbox(es) remain after 30s\n%s", len(left), h.log(30))
	}
	// And it stays forgotten across another crash.
	h.kill9()
	srv.set(true)
	h.start()
	time.Sleep(3 * time.Second)
	if left := h.sandboxes("web"); len(left) > 0 {
		t.Errorf("the dropped pod came back from the checkpoint after a crash: %d sandbox(es)", len(left))
	}
}

// Killed in the middle of a termination: the next agent finishes it within
// the grace period that was left, not a fresh one.
func TestBinaryCheckpointKill9DuringTermination(t *testing.T) {
	const grace = 12
	h := newAgent(t, "--housekeeping-interval", "500ms", "--relist-interval", "200ms")
	pod := testPod("slow", corev1.Container{
		Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		// Ignores SIGTERM: only the end of the grace period stops it.
		Command: []string{"sh", "-c", "trap '' TERM; " + sleepForever},
	})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(grace))
	h.writeManifest(pod)
	h.waitPod("slow", "running", 60*time.Second, runningContainer("main"))

	removed := time.Now()
	h.removeManifest("slow")
	h.waitPod("slow", "terminating", 10*time.Second, func(p localapi.Pod) bool { return p.WorkerPhase == "terminating" })
	time.Sleep(3 * time.Second)
	h.kill9()
	h.start()

	deadline := removed.Add(grace * time.Second)
	for len(h.containers("slow", true)) > 0 && time.Now().Before(deadline.Add(15*time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	stopped := time.Now()
	if n := len(h.containers("slow", true)); n > 0 {
		t.Fatalf("%d container(s) of the pod still run %v after its removal\n%s", n, stopped.Sub(removed), h.log(30))
	}
	t.Logf("removed at 0s, agent killed at ~3s, containers stopped at %.1fs (grace %ds)", stopped.Sub(removed).Seconds(), grace)
	if late := stopped.Sub(deadline); late > 3*time.Second {
		t.Errorf("the termination ended %v after its deadline: the restart gave it a fresh grace period", late)
	}
	if early := deadline.Sub(stopped); early > 3*time.Second {
		t.Errorf("the termination ended %v before its deadline: the grace period was cut", early)
	}
	deadlineSB := time.Now().Add(10 * time.Second)
	for len(h.sandboxes("slow")) > 0 && time.Now().Before(deadlineSB) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(h.sandboxes("slow")); n > 0 {
		t.Errorf("%d sandbox(es) of the removed pod remain", n)
	}
}

// agentRunning starts the agent with one static pod of that name and
// returns it once the pod runs, with its running container IDs.
func agentRunning(t *testing.T, name string) (*agentHarness, map[string]string) {
	t.Helper()
	h := newAgent(t)
	h.writeManifest(testPod(name, shContainer("main", sleepForever)))
	h.waitPod(name, "running", 60*time.Second, runningContainer("main"))
	return h, h.runningIDs(name)
}

// A checkpoint file that is not one is moved aside with a clear log line,
// and the agent starts from its sources.
func TestBinaryCheckpointCorruptFileIsMovedAside(t *testing.T) {
	h, before := agentRunning(t, "solid")

	h.kill9()
	db := filepath.Join(h.dir, "root", "checkpoint.db")
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitPod("solid", "running", 60*time.Second, runningContainer("main"))
	if aside, _ := filepath.Glob(db + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("moved-aside files: %v, want one", aside)
	}
	if log := h.log(200); !strings.Contains(log, "Checkpoint unreadable; moved aside, starting from the sources") {
		t.Errorf("no log line says the checkpoint was moved aside\n%s", log)
	}
	time.Sleep(2 * time.Second)
	if now := h.runningIDs("solid"); !maps.Equal(now, before) {
		t.Errorf("the pod runs %v, want %v adopted from the runtime", now, before)
	}
}

// A checkpoint left by a newer agent (a downgrade) is refused: the agent
// exits 1 before serving anything, with a message that names the file and
// both schema versions, and leaves the file as it was (same bytes, same
// inode) and the pods running. Moving the file aside, as the message says,
// lets it start from its sources and adopt the pods.
func TestBinaryCheckpointNewerSchemaIsRefused(t *testing.T) {
	h, before := agentRunning(t, "kept")
	h.stop()

	db := filepath.Join(h.dir, "root", "checkpoint.db")
	current, newer := checkpoint.SchemaVersion(), checkpoint.SchemaVersion()+1
	if err := checkpointtest.SetSchema(db, newer); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}

	code, output := h.runToExit(30 * time.Second)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (failed to start)\n%s", code, output)
	}
	// The last line is what the operator reads on the terminal.
	lines := strings.Split(strings.TrimSpace(output), "\n")
	last := lines[len(lines)-1]
	t.Logf("the agent says: %s", last)
	words := strings.Fields(strings.NewReplacer(db, " ", ":", " ", ",", " ").Replace(last))
	switch {
	case !strings.HasPrefix(last, "nodeagent: "):
		t.Errorf("the last line of the output is not the agent's error:\n%s", output)
	case !strings.Contains(last, db):
		t.Errorf("the error does not name the file %s: %s", db, last)
	case !slices.Contains(words, strconv.Itoa(int(newer))) || !slices.Contains(words, strconv.Itoa(int(current))):
		t.Errorf("the error does not name both schema versions (file %d, agent %d): %s", newer, current, last)
	case !strings.Contains(last, "newer"):
		t.Errorf("the error does not say the file is newer: %s", last)
	}

	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	infoAfter, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, after) {
		t.Error("the refused checkpoint's bytes changed")
	}
	if !os.SameFile(info, infoAfter) || !info.ModTime().Equal(infoAfter.ModTime()) || info.Mode() != infoAfter.Mode() {
		t.Errorf("the refused checkpoint was replaced or touched: before %v %v %v, after %v %v %v",
			info.Sys().(*syscall.Stat_t).Ino, info.ModTime(), info.Mode(), infoAfter.Sys().(*syscall.Stat_t).Ino, infoAfter.ModTime(), infoAfter.Mode())
	}
	if others, _ := filepath.Glob(db + "?*"); len(others) > 0 {
		t.Errorf("the refusal left files beside the checkpoint: %v", others)
	}
	if _, err := os.Lstat(h.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refusing agent created its local API socket: %v", err)
	}
	if now := h.runningIDs("kept"); !maps.Equal(now, before) {
		t.Errorf("the pod runs %v after the refusal, want %v untouched", now, before)
	}

	// The operator's way out: the file moved aside, the agent starts from
	// its sources and adopts what runs.
	if err := os.Rename(db, db+".newer"); err != nil {
		t.Fatal(err)
	}
	h.start()
	p := h.waitPod("kept", "adopted", 60*time.Second, runningContainer("main"))
	if !p.Adopted || p.Restored {
		t.Errorf("adopted=%v restored=%v, want adopted from the runtime, not restored", p.Adopted, p.Restored)
	}
	if now := h.runningIDs("kept"); !maps.Equal(now, before) {
		t.Errorf("the pod runs %v after the start without the checkpoint, want %v adopted", now, before)
	}
}

// runToExit runs the agent once over h's state, with the flags h.start
// gives it, expecting it to exit on its own within timeout; it returns the
// exit code and everything the agent printed.
func (h *agentHarness) runToExit(timeout time.Duration) (int, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, nodeagentBinary(h.t), h.args()...).CombinedOutput()
	if ctx.Err() != nil {
		h.t.Fatalf("the agent still ran %v after its start, want an exit\n%s", timeout, out)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	h.t.Fatalf("running the agent: %v", err)
	return -1, ""
}
