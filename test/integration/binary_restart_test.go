package integration

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// SIGTERM stops the agent, not the pods; the next agent adopts them
// without restarting a container.
func TestBinarySIGTERMLeavesPodsAndRestartAdopts(t *testing.T) {
	h := newAgent(t)
	pod := testPod("adopt", shContainer("main", sleepForever), shContainer("side", sleepForever))
	pod.Spec.HostNetwork = false // a CNI sandbox too
	h.writeManifest(pod)
	p := h.waitPod("adopt", "running", 60*time.Second, func(p localapi.Pod) bool {
		return runningContainer("main")(p) && runningContainer("side")(p)
	})
	before := h.runningIDs("adopt")
	sandbox := h.sandboxes("adopt")

	h.stop()
	time.Sleep(2 * time.Second)
	if now := h.runningIDs("adopt"); !maps.Equal(now, before) {
		t.Fatalf("after SIGTERM the running containers are %v, want %v untouched", now, before)
	}

	h.start()
	q := h.waitPod("adopt", "adopted", 60*time.Second, func(q localapi.Pod) bool {
		return runningContainer("main")(q) && runningContainer("side")(q)
	})
	time.Sleep(4 * time.Second) // several relists, a sync
	if now := h.runningIDs("adopt"); !maps.Equal(now, before) {
		t.Errorf("after the restart the running containers are %v, want %v adopted", now, before)
	}
	if now := h.sandboxes("adopt"); len(now) != 1 || now[0].Id != sandbox[0].Id {
		t.Errorf("sandboxes after the restart: %v, want the same one %s", now, sandbox[0].Id)
	}
	d, _ := h.client.Pod(context.Background(), "default", h.podName("adopt"))
	q = d.Pod
	if q.UID != p.UID {
		t.Errorf("pod UID %s after the restart, want %s", q.UID, p.UID)
	}
	for _, name := range []string{"main", "side"} {
		if c := findContainer(q, name); c == nil || c.RestartCount != 0 {
			t.Errorf("container %s after adoption: %+v, want restart count 0", name, c)
		}
	}
}

// containerd killed with SIGKILL and started again: the agent keeps running,
// keeps its pods, and runs new ones.
func TestBinarySurvivesContainerdRestart(t *testing.T) {
	h := newAgent(t)
	h.writeManifest(testPod("before", shContainer("main", sleepForever)))
	h.waitPod("before", "running", 60*time.Second, runningContainer("main"))
	before := h.runningIDs("before")

	restartContainerd(t)
	if !h.running() {
		t.Fatalf("nodeagent exited when containerd restarted: %v\n%s", h.exit, h.log(40))
	}

	h.writeManifest(testPod("after", shContainer("main", sleepForever)))
	h.waitPod("after", "running", 90*time.Second, runningContainer("main"))
	h.waitPod("before", "running", 30*time.Second, runningContainer("main"))
	if now := h.runningIDs("before"); !maps.Equal(now, before) {
		t.Errorf("the pod started before the restart runs %v, want %v (its shim survived containerd)", now, before)
	}
}

// restartContainerd kills containerd with SIGKILL (its shims, and so the
// containers, live on) and starts it again with hack/containerd-up.sh.
func restartContainerd(t *testing.T) {
	t.Helper()
	dir := os.Getenv("NODEAGENT_TEST_DIR")
	if dir == "" {
		dir = "/var/lib/nodeagent-test"
	}
	ctrdDir := filepath.Join(dir, "containerd")
	pidText, err := os.ReadFile(filepath.Join(ctrdDir, "containerd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing containerd (pid %d): %v", pid, err)
	}
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd := exec.Command("bash", filepath.Join(env.RepoRoot, "hack", "containerd-up.sh"))
	cmd.Env = append(os.Environ(), "NODEAGENT_CONTAINERD_DIR="+ctrdDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restarting containerd: %v\n%s", err, out)
	}
	cri := env.CRI(t)
	if _, err := cri.Runtime.Version(context.Background(), &runtimeapi.VersionRequest{}); err != nil {
		t.Fatalf("containerd does not answer after its restart: %v", err)
	}
}
