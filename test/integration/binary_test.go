package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// The TestBinary* tests run the nodeagent binary as a user would: a
// manifest directory, the real containerd, SIGTERM to stop it. They see the
// agent only through its local API and through the CRI.

// built holds the binaries built so far in this test process, by command.
var built sync.Map // command name -> *builtBinary

type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// nodeagentBinary builds cmd/nodeagent once per test process.
func nodeagentBinary(t testing.TB) string { return binary(t, "nodeagent") }

// binary builds cmd/<name> once per test process, with hack/build.sh, as
// it ships, into a fixed directory that the next run overwrites.
func binary(t testing.TB, name string) string {
	t.Helper()
	v, _ := built.LoadOrStore(name, &builtBinary{})
	bin := v.(*builtBinary)
	bin.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "nodeagent-integration")
		if bin.err = os.MkdirAll(dir, 0o755); bin.err != nil {
			return
		}
		bin.path = filepath.Join(dir, name)
		cmd := exec.Command("bash", "hack/build.sh", bin.path)
		cmd.Dir = env.RepoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("hack/build.sh %s: %v\n%s", name, err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

// agentHarness is one nodeagent process at a time over one state: a
// manifest directory, a root dir, a log dir, a socket. The node name is
// unique per harness, so the pods of a test are those named *-<node>.
type agentHarness struct {
	t         testing.TB
	node      string
	dir       string
	manifests string
	socket    string
	addr      string
	extraArgs []string
	// argv, if set, is the whole command line instead of h's state
	// flags and extraArgs (a test of the command line itself).
	argv   []string
	binary string // the agent to run; empty: this tree's
	// baseline: binary is a benchmark's baseline (binary_ab_test.go), run
	// with this tree's flags, not an upgrade test's older agent.
	baseline bool
	cri      *framework.CRI
	client   *localapi.Client

	proc   *exec.Cmd
	exited chan struct{}
	exit   error
	starts int
}

// newAgent starts nodeagent on an empty manifest directory and stops it,
// and every pod the test left, when the test ends.
func newAgent(t testing.TB, extraArgs ...string) *agentHarness {
	t.Helper()
	return newAgentNamed(t, agentNodeName(), extraArgs...)
}

// agentNodeName is a new agent's unique node name.
func agentNodeName() string {
	suffix := make([]byte, 3)
	rand.Read(suffix)
	return "bin" + hex.EncodeToString(suffix)
}

// newAgentNamed is newAgent for a given node name: a connected agent's
// must be the one its credentials name.
func newAgentNamed(t testing.TB, node string, extraArgs ...string) *agentHarness {
	t.Helper()
	return newAgentOf(t, node, "", extraArgs...)
}

// newAgentOf is newAgentNamed running the given agent binary (empty: this
// tree's), as an upgrade test's older version.
func newAgentOf(t testing.TB, node, binary string, extraArgs ...string) *agentHarness {
	t.Helper()
	h := newHarness(t, node, binary, extraArgs...)
	h.start()
	return h
}

// newHarness is newAgentOf without the start.
func newHarness(t testing.TB, node, binary string, extraArgs ...string) *agentHarness {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "na")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	h := &agentHarness{
		t:         t,
		node:      node,
		dir:       t.TempDir(),
		socket:    filepath.Join(sockDir, "nodeagent.sock"),
		addr:      freeAddress(t),
		extraArgs: extraArgs,
		binary:    binary,
		cri:       env.CRI(t),
	}
	h.manifests = filepath.Join(h.dir, "manifests")
	if err := os.MkdirAll(h.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.teardown)
	return h
}

func freeAddress(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// args are the flags every start of the agent gets: h's state, then the
// test's own.
func (h *agentHarness) args() []string {
	if h.argv != nil {
		return h.argv
	}
	args := []string{
		"--manifest-dir", h.manifests,
		"--cri-endpoint", env.CRIEndpoint,
		"--node-name", h.node,
		"--root-dir", filepath.Join(h.dir, "root"),
		"--pod-log-dir", filepath.Join(h.dir, "logs"),
		"--local-api-socket", h.socket,
		"--serve-address", h.addr,
		"-v", "2",
	}
	if h.binary == "" || h.baseline {
		// No image GC on the shared containerd: it could remove the
		// busybox image the tests run with pull policy Never
		// (TestBinaryImageGC has a containerd of its own). An older
		// agent (an upgrade test's) has no image GC, nor the flag.
		args = append(args, "--image-gc-high-threshold", "100")
		// Nor the eviction manager's disk reclaim, which removes unused
		// images too: the machine's disk, not the test, would decide.
		// Tests of disk pressure give thresholds of their own.
		args = append(args, "--eviction-hard", "memory.available<100Mi")
	}
	return append(args, h.extraArgs...)
}

// start runs a new nodeagent process and waits until its local API answers.
func (h *agentHarness) start() {
	h.t.Helper()
	h.starts++
	logPath := filepath.Join(h.dir, fmt.Sprintf("agent-%d.log", h.starts))
	logFile, err := os.Create(logPath)
	if err != nil {
		h.t.Fatal(err)
	}
	bin := h.binary
	if bin == "" {
		bin = nodeagentBinary(h.t)
	}
	cmd := exec.Command(bin, h.args()...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// An agent must not outlive a test process that was killed (a timeout):
	// left running on the shared containerd, it would take the next run's
	// pods for orphans and kill them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.proc, h.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		h.exit = cmd.Wait()
		logFile.Close()
		close(exited)
	}(h.exited)

	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := localapi.Dial(h.socket); err == nil {
			if _, err := c.Health(context.Background()); err == nil {
				h.client = c
				return
			}
			c.Close()
		}
		select {
		case <-h.exited:
			h.t.Fatalf("nodeagent exited at start: %v\n%s", h.exit, tail(logPath, 40))
		default:
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("nodeagent's local API did not answer within 30s\n%s", tail(logPath, 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *agentHarness) running() bool {
	if h.proc == nil {
		return false
	}
	select {
	case <-h.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and requires a clean exit within 30 s.
func (h *agentHarness) stop() {
	h.t.Helper()
	if !h.running() {
		return
	}
	h.proc.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		if log := h.log(1 << 20); strings.Contains(log, "Parts did not stop in time") {
			_, stuck, _ := strings.Cut(log, "Parts did not stop in time")
			h.t.Logf("nodeagent exited, leaving parts behind that did not stop: %s", stuck)
		}
	case <-time.After(30 * time.Second):
		h.proc.Process.Kill()
		<-h.exited
		h.t.Fatalf("nodeagent did not exit within 30s of SIGTERM\n%s", h.log(40))
	}
	if h.exit != nil {
		h.t.Errorf("nodeagent exited with %v after SIGTERM, want 0\n%s", h.exit, h.log(40))
	}
	if _, err := os.Lstat(h.socket); !errors.Is(err, os.ErrNotExist) {
		h.t.Errorf("the local API socket remains after a clean stop: %v", err)
	}
	h.client.Close()
}

// kill9 kills the agent with SIGKILL, as a crash would: nothing of it
// runs its shutdown.
func (h *agentHarness) kill9() {
	h.t.Helper()
	if !h.running() {
		return
	}
	h.proc.Process.Kill()
	<-h.exited
	h.client.Close()
}

func (h *agentHarness) log(lines int) string {
	return tail(filepath.Join(h.dir, fmt.Sprintf("agent-%d.log", h.starts)), lines)
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "--- " + path + " (tail)\n" + strings.Join(all, "\n")
}

// teardown removes every manifest with an agent running, waits until the
// runtime holds no sandbox of this node, and stops the agent. What the
// agent failed to remove is removed through the CRI, and the test fails.
func (h *agentHarness) teardown() {
	t := h.t
	if t.Failed() && h.starts > 0 {
		t.Logf("nodeagent log:\n%s", h.log(80))
	}
	if !h.running() {
		h.start()
	}
	entries, _ := os.ReadDir(h.manifests)
	for _, e := range entries {
		os.Remove(filepath.Join(h.manifests, e.Name()))
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(h.sandboxes("")) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := h.sandboxes(""); len(left) > 0 {
		t.Errorf("teardown: %d sandbox(es) of node %s remain 90s after their manifests were removed; removing them\n%s", len(left), h.node, h.log(40))
		ctx := context.Background()
		for _, sb := range left {
			h.cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
			h.cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
		}
	}
	h.stop()
}

// podName is the name the agent gives the static pod called name.
func (h *agentHarness) podName(name string) string { return name + "-" + h.node }

// writeManifest writes pod as <name>.yaml atomically (a hidden temporary
// file, then a rename), after checking that the agent's parser takes it.
func (h *agentHarness) writeManifest(pod *corev1.Pod) string {
	h.t.Helper()
	data, err := yaml.Marshal(pod)
	if err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.manifests, pod.Name+".yaml")
	if _, err := manifest.ParseManifest(data, manifest.ParseOptions{NodeName: h.node, Source: podtypes.FileSource, Origin: path}); err != nil {
		h.t.Fatalf("the test's manifest is refused: %v\n%s", err, data)
	}
	h.writeRaw(filepath.Base(path), data)
	return path
}

func (h *agentHarness) writeRaw(name string, data []byte) {
	h.t.Helper()
	tmp := filepath.Join(h.manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.manifests, name)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *agentHarness) removeManifest(name string) {
	h.t.Helper()
	if err := os.Remove(filepath.Join(h.manifests, name+".yaml")); err != nil {
		h.t.Fatal(err)
	}
}

// waitPod polls the local API until the pod named name (the manifest's
// name) satisfies done, and returns it.
func (h *agentHarness) waitPod(name, what string, timeout time.Duration, done func(localapi.Pod) bool) localapi.Pod {
	h.t.Helper()
	full := h.podName(name)
	deadline := time.Now().Add(timeout)
	var last []localapi.Pod
	for {
		pods, err := h.client.Pods(context.Background())
		if err == nil {
			last = pods
			for _, p := range pods {
				if p.Name == full && done(p) {
					return p
				}
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("pod %s: not %s within %v; the agent shows:\n%s\n%s", full, what, timeout, describePods(last, full), h.log(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describePods(pods []localapi.Pod, name string) string {
	var b bytes.Buffer
	for _, p := range pods {
		if name != "" && p.Name != name {
			continue
		}
		fmt.Fprintf(&b, "  %s uid=%s worker=%s phase=%s\n", p.Name, p.UID, p.WorkerPhase, p.Phase)
		for _, c := range append(append([]localapi.Container{}, p.InitContainers...), p.Containers...) {
			fmt.Fprintf(&b, "    %s state=%s reason=%s restarts=%d id=%s\n", c.Name, c.State, c.Reason, c.RestartCount, c.ContainerID)
		}
	}
	return b.String()
}

// runningContainer is a pod condition: the container runs.
func runningContainer(container string) func(localapi.Pod) bool {
	return func(p localapi.Pod) bool {
		c := findContainer(p, container)
		return p.WorkerPhase == "sync" && c != nil && c.State == localapi.StateRunning
	}
}

func findContainer(p localapi.Pod, name string) *localapi.Container {
	for _, cs := range [][]localapi.Container{p.InitContainers, p.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// sandboxes lists the runtime's sandboxes of this node's pods, or of the
// pod named name when it is not empty.
func (h *agentHarness) sandboxes(name string) []*runtimeapi.PodSandbox {
	h.t.Helper()
	resp, err := h.cri.Runtime.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		h.t.Fatalf("ListPodSandbox: %v", err)
	}
	var out []*runtimeapi.PodSandbox
	for _, sb := range resp.Items {
		n := sb.GetMetadata().GetName()
		if (name == "" && strings.HasSuffix(n, "-"+h.node)) || (name != "" && n == h.podName(name)) {
			out = append(out, sb)
		}
	}
	return out
}

// containers lists the runtime's containers of the pod named name (every
// generation of it), optionally only those running.
func (h *agentHarness) containers(name string, onlyRunning bool) []*runtimeapi.Container {
	h.t.Helper()
	req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.name": h.podName(name)},
	}}
	if onlyRunning {
		req.Filter.State = &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	}
	resp, err := h.cri.Runtime.ListContainers(context.Background(), req)
	if err != nil {
		h.t.Fatalf("ListContainers: %v", err)
	}
	return resp.Containers
}

// runningIDs maps the running containers of a pod by container name.
func (h *agentHarness) runningIDs(name string) map[string]string {
	out := map[string]string{}
	for _, c := range h.containers(name, true) {
		out[c.GetMetadata().GetName()] = c.Id
	}
	return out
}

// testPod is a busybox static pod whose containers run the given shell
// scripts; a container stops within a second of SIGTERM.
func testPod(name string, containers ...corev1.Container) *corev1.Pod {
	grace := int64(5)
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers:                    containers,
			TerminationGracePeriodSeconds: &grace,
			HostNetwork:                   true,
		},
	}
}

// shContainer runs script under sh, with a SIGTERM trap so that it stops
// at once instead of at the end of the grace period.
func shContainer(name, script string) corev1.Container {
	return corev1.Container{
		Name:            name,
		Image:           env.BusyboxImage,
		ImagePullPolicy: corev1.PullNever,
		Command:         []string{"sh", "-c", "trap 'exit 0' TERM; " + script},
	}
}

const sleepForever = "while true; do sleep 0.2; done"

func envVar(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }
