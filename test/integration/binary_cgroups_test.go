package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/internal/runtime"
)

// The pods' cgroups as the kernel holds them: each pod under its QoS
// class with its totals as limits, the QoS cgroups' shares, and each
// container's oom_score_adj, for a Guaranteed, a Burstable and a
// BestEffort pod; a removed pod's cgroup goes and the burstable shares
// follow.
func TestBinaryCgroupsAndOOMScores(t *testing.T) {
	// Registered first, so run last: after the harness removed the pods.
	root, _ := cgroupRoot(t)
	h := newAgent(t, "--cgroup-root", root)

	withResources := func(c corev1.Container, req, lim corev1.ResourceList) corev1.Container {
		c.Resources = corev1.ResourceRequirements{Requests: req, Limits: lim}
		return c
	}
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	pods := []*corev1.Pod{
		testPod("guaranteed", withResources(shContainer("main", sleepForever), rl("200m", "64Mi"), rl("200m", "64Mi"))),
		testPod("burstable", withResources(shContainer("main", sleepForever), rl("100m", "512Mi"), rl("300m", ""))),
		testPod("besteffort", shContainer("main", sleepForever)),
	}
	for _, p := range pods {
		h.writeManifest(p)
	}
	uids := map[string]string{}
	for _, p := range pods {
		uids[p.Name] = string(h.waitPod(p.Name, "running", 60*time.Second, runningContainer("main")).UID)
	}

	kubepods := root + "/kubepods"
	cpu := func(rel string) string { return filepath.Join("/sys/fs/cgroup/cpu", kubepods, rel) }
	mem := func(rel string) string { return filepath.Join("/sys/fs/cgroup/memory", kubepods, rel) }
	const unlimited = "9223372036854771712" // memory.limit_in_bytes of no limit, 4 KiB pages
	checkFiles(t, map[string]string{
		cpu("besteffort/cpu.shares"):                                          "2",
		cpu("burstable/cpu.shares"):                                           "102", // the one Burstable pod's 100m
		cpu("pod" + uids["guaranteed"] + "/cpu.shares"):                       "204",
		cpu("pod" + uids["guaranteed"] + "/cpu.cfs_quota_us"):                 "20000",
		cpu("pod" + uids["guaranteed"] + "/cpu.cfs_period_us"):                "100000",
		mem("pod" + uids["guaranteed"] + "/memory.limit_in_bytes"):            "67108864",
		cpu("burstable/pod" + uids["burstable"] + "/cpu.shares"):              "102",
		cpu("burstable/pod" + uids["burstable"] + "/cpu.cfs_quota_us"):        "30000",
		mem("burstable/pod" + uids["burstable"] + "/memory.limit_in_bytes"):   unlimited,
		cpu("besteffort/pod" + uids["besteffort"] + "/cpu.shares"):            "2",
		cpu("besteffort/pod" + uids["besteffort"] + "/cpu.cfs_quota_us"):      "-1",
		mem("besteffort/pod" + uids["besteffort"] + "/memory.limit_in_bytes"): unlimited,
	})

	// containerd runs with restrict_oom_score_adj here (the machine cannot
	// lower a score): a score below its own is raised to it, as the
	// sandbox's -998 is.
	floor := h.oomScoreAdjOfSandbox("guaranteed")
	memTotal := memTotalBytes(t)
	for name, want := range map[string]int64{
		"guaranteed": max(-997, floor),
		"burstable":  min(max(1000-1000*(512<<20)/memTotal, 3), 999),
		"besteffort": 1000,
	} {
		got := strings.TrimSpace(h.exec(name, "main", "cat", "/proc/1/oom_score_adj"))
		t.Logf("pod %s: oom_score_adj %s (sandbox %d, MemTotal %d)", name, got, floor, memTotal)
		if got != strconv.FormatInt(want, 10) {
			t.Errorf("pod %s: oom_score_adj = %s, want %d", name, got, want)
		}
	}

	// A pod's removal takes its cgroup, and its requests off the burstable
	// cgroup's shares.
	h.removeManifest("burstable")
	waitGone(t, filepath.Dir(cpu("burstable/pod"+uids["burstable"]+"/cpu.shares")), 60*time.Second)
	checkFiles(t, map[string]string{cpu("burstable/cpu.shares"): "2"})
	for _, hier := range []string{"memory", "pids", "cpuset"} {
		dir := filepath.Join("/sys/fs/cgroup", hier, kubepods, "burstable", "pod"+uids["burstable"])
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed with the pod", dir, err)
		}
	}
}

// A pod started by an earlier version, whose cgroup is the flat
// <root>/pod<uid>, is still found and its cgroup removed: here one left
// behind without a manifest, which the agent kills as an orphan.
func TestBinaryCgroupsOfEarlierLayoutRemoved(t *testing.T) {
	root, suffix := cgroupRoot(t)
	ctx := context.Background()
	cri := env.CRI(t)
	uid := "legacy-" + suffix
	node := "legacy" + suffix
	logDir := t.TempDir()
	sb, err := cri.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "old-" + node, Namespace: "default", Uid: uid},
		LogDirectory: logDir,
		Labels: map[string]string{runtime.LabelPodName: "old-" + node, runtime.LabelPodNamespace: "default",
			runtime.LabelPodUID: uid},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: root + "/pod" + uid, // the layout before the QoS tree
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}},
		},
	}})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	t.Cleanup(func() { // in case the agent did not
		cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId})
		cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	})
	flat := filepath.Join("/sys/fs/cgroup/cpu", root, "pod"+uid)
	if _, err := os.Stat(flat); err != nil {
		t.Fatalf("the old layout's pod cgroup: %v", err)
	}
	newAgentNamed(t, node, "--cgroup-root", root)
	waitGone(t, flat, 60*time.Second)
	for _, hier := range []string{"memory", "pids", "cpuset", "freezer"} {
		dir := filepath.Join("/sys/fs/cgroup", hier, root, "pod"+uid)
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed with the pod", dir, err)
		}
	}
}

// flatLayoutCommit is the last version of the agent that put each pod's
// cgroup at <root>/pod<uid>, before the QoS tree.
const flatLayoutCommit = "57453c6"

// An upgrade from the flat layout: a pod the earlier version started is
// adopted, not restarted; a container started after the upgrade joins the
// pod's old cgroup beside its sandbox; the pod's removal removes that
// cgroup and makes none in the QoS tree.
func TestBinaryCgroupsUpgradeFromFlatLayout(t *testing.T) {
	if err := exec.Command("git", "-C", env.RepoRoot, "cat-file", "-e", flatLayoutCommit+"^{commit}").Run(); err != nil {
		// A shallow clone: the earlier version cannot be built. The unit
		// tests of the runtime and cgroups packages still cover the rule.
		t.Skipf("commit %s is not in this clone's history (a shallow clone?): the upgrade from it cannot be run", flatLayoutCommit)
	}
	old := olderNodeagent(t, flatLayoutCommit)
	root, suffix := cgroupRoot(t)
	h := newAgentOf(t, "up"+suffix, old, "--cgroup-root", root)

	c := shContainer("main", sleepForever)
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	h.writeManifest(testPod("up", c))
	uid := string(h.waitPod("up", "running", 60*time.Second, runningContainer("main")).UID)
	before := h.runningIDs("up")["main"]
	flat := filepath.Join("/sys/fs/cgroup/cpu", root, "pod"+uid)
	qos := filepath.Join("/sys/fs/cgroup/cpu", root, "kubepods", "burstable", "pod"+uid)
	if _, err := os.Stat(flat); err != nil {
		t.Fatalf("the earlier version's pod cgroup: %v", err)
	}

	h.stop()
	h.binary = ""
	h.start()
	h.waitPod("up", "adopted", 30*time.Second, func(p localapi.Pod) bool {
		m := findContainer(p, "main")
		return p.WorkerPhase == "sync" && m != nil && m.State == localapi.StateRunning && strings.HasSuffix(m.ContainerID, before)
	})
	time.Sleep(2 * time.Second) // a few relists and syncs
	if now := h.runningIDs("up")["main"]; now != before {
		t.Fatalf("after the upgrade main is %s, want %s adopted", now, before)
	}

	// The container exits (its TERM trap) and is restarted by the new version.
	h.exec("up", "main", "kill", "1")
	var after string
	h.waitPod("up", "restarted", 60*time.Second, func(p localapi.Pod) bool {
		m := findContainer(p, "main")
		if m == nil || m.State != localapi.StateRunning || m.RestartCount < 1 {
			return false
		}
		after = h.runningIDs("up")["main"]
		return after != "" && after != before
	})
	if _, err := os.Stat(filepath.Join(flat, after)); err != nil {
		t.Errorf("the restarted container's cgroup beside its sandbox: %v", err)
	}
	if _, err := os.Stat(qos); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v, want no cgroup in the QoS tree for a pod of the earlier layout", qos, err)
	}

	h.removeManifest("up")
	waitGone(t, flat, 60*time.Second)
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", root, "pod"+uid))
	if len(dirs) > 0 {
		t.Errorf("cgroups left after the pod's removal: %v", dirs)
	}
}

// olderNodeagent builds the agent of an earlier commit of this repository,
// from a git archive of it, once per commit and test process.
func olderNodeagent(t *testing.T, commit string) string {
	t.Helper()
	v, _ := built.LoadOrStore("nodeagent@"+commit, &builtBinary{})
	bin := v.(*builtBinary)
	bin.once.Do(func() {
		src, err := os.MkdirTemp("", "nodeagent-"+commit)
		if err != nil {
			bin.err = err
			return
		}
		defer os.RemoveAll(src)
		bin.path = filepath.Join(os.TempDir(), "nodeagent-integration", "nodeagent-"+commit)
		script := fmt.Sprintf("mkdir -p %q && git -C %q archive %s | tar -x -C %q && cd %q && CGO_ENABLED=0 go build -trimpath -o %q ./cmd/nodeagent",
			filepath.Dir(bin.path), env.RepoRoot, commit, src, src, bin.path)
		if out, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("building nodeagent at %s: %v\n%s", commit, err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

// Without systemd as init, --cgroup-driver=systemd is refused at start
// with a message that says why, rather than run pods it cannot place.
func TestBinaryCgroupDriverSystemdRefusedWithoutSystemd(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd runs here")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, nodeagentBinary(t),
		"--manifest-dir", dir, "--cri-endpoint", env.CRIEndpoint, "--node-name", "systemd-refused",
		"--root-dir", filepath.Join(dir, "root"), "--pod-log-dir", filepath.Join(dir, "logs"),
		"--local-api-socket", filepath.Join(dir, "na.sock"), "--serve-address", "",
		"--cgroup-driver", "systemd").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("the agent with --cgroup-driver=systemd: %v, want it to exit non-zero\n%s", err, out)
	}
	if !strings.Contains(string(out), "--cgroup-driver=systemd") || !strings.Contains(string(out), "/run/systemd/system") {
		t.Errorf("the agent's refusal does not say why:\n%s", out)
	}
}

// oomScoreAdjOfSandbox is the oom_score_adj of the pod's sandbox (pause)
// process, read on the host.
func (h *agentHarness) oomScoreAdjOfSandbox(name string) int64 {
	h.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", h.sandboxPID(name)))
	if err != nil {
		h.t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func checkFiles(t *testing.T, want map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, file := range keys {
		b, err := os.ReadFile(file)
		if got := strings.TrimSpace(string(b)); err != nil || got != want[file] {
			t.Errorf("%s = %q (%v), want %s", file, got, err, want[file])
		}
	}
}

func waitGone(t *testing.T, path string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still there after %v (%v)", path, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func memTotalBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

// removeCgroupRoot removes what is left of a test's cgroup root (the QoS
// cgroups, which outlive the agent as under the kubelet) in every
// hierarchy, deepest first.
// cgroupRoot is a --cgroup-root of the test's own, with the suffix that
// names it, removed when the test ends: call it before the agent starts,
// so that the removal runs after the harness removed the pods.
func cgroupRoot(t *testing.T) (root, suffix string) {
	suffix = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	root = "/nodeagent/it-" + suffix
	t.Cleanup(func() { removeCgroupRoot(t, root) })
	return root, suffix
}

func removeCgroupRoot(t *testing.T, root string) {
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", root))
	for _, top := range dirs {
		var all []string
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		slices.Reverse(all)
		for _, d := range all {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("cleaning up the test's cgroups: %v", err)
			}
		}
	}
}
