package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// exec runs cmd in the running container of the pod named name and
// returns its standard output; the test fails if it exits non-zero.
func (h *agentHarness) exec(name, container string, cmd ...string) string {
	h.t.Helper()
	id := h.runningIDs(name)[container]
	if id == "" {
		h.t.Fatalf("pod %s: container %s does not run", name, container)
	}
	resp, err := h.cri.Runtime.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 10})
	if err != nil {
		var b strings.Builder
		for _, c := range h.containers(name, false) {
			st, _ := h.cri.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
			fmt.Fprintf(&b, "  %s %s %s exit=%d reason=%q message=%q\n", c.GetMetadata().GetName(), c.Id[:12], c.State,
				st.GetStatus().GetExitCode(), st.GetStatus().GetReason(), st.GetStatus().GetMessage())
		}
		pods, _ := h.client.Pods(context.Background())
		h.t.Fatalf("exec %v in %s/%s: %v\nthe runtime holds:\n%s\nthe agent shows:\n%s", cmd, name, container, err, b.String(), describePods(pods, h.podName(name)))
	}
	if resp.ExitCode != 0 {
		h.t.Fatalf("exec %v in %s/%s: exit %d: %s", cmd, name, container, resp.ExitCode, resp.Stderr)
	}
	return string(resp.Stdout)
}

// sandboxProcStatus is the fields of /proc/<pid>/status of the pod's
// sandbox (pause) process, read on the host.
func (h *agentHarness) sandboxProcStatus(name string) map[string]string {
	h.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.sandboxPID(name)))
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// sandboxPID is the host PID of the pod's sandbox (pause) process.
func (h *agentHarness) sandboxPID(name string) int {
	h.t.Helper()
	sbs := h.sandboxes(name)
	if len(sbs) != 1 {
		h.t.Fatalf("pod %s: %d sandboxes, want 1", name, len(sbs))
	}
	resp, err := h.cri.Runtime.PodSandboxStatus(context.Background(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbs[0].Id, Verbose: true})
	if err != nil {
		h.t.Fatal(err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.GetInfo()["info"]), &info); err != nil || info.Pid == 0 {
		h.t.Fatalf("pod %s: no pid in the sandbox's verbose status (%v): %q", name, err, resp.GetInfo()["info"])
	}
	return info.Pid
}

// procStatus is the fields of /proc/1/status of the container's process
// that a securityContext decides.
func (h *agentHarness) procStatus(name, container string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(h.exec(name, container, "cat", "/proc/1/status"), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

// Every field of a securityContext reaches the container's process, as
// the kernel reports it: users, groups, no_new_privs, seccomp, capabilities,
// a read-only root, the fsGroup of an emptyDir, and the pod's sysctls.
func TestBinarySecurityContextApplied(t *testing.T) {
	h := newAgent(t)
	profiles := filepath.Join(h.dir, "root", "seccomp", "profiles")
	if err := os.MkdirAll(profiles, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "allow.json"), []byte(`{"defaultAction":"SCMP_ACT_ALLOW"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	restricted := shContainer("restricted", sleepForever)
	restricted.SecurityContext = &corev1.SecurityContext{
		RunAsUser:                new(int64(1000)),
		AllowPrivilegeEscalation: new(false),
		ReadOnlyRootFilesystem:   new(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	restricted.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	netAdmin := shContainer("netadmin", sleepForever)
	netAdmin.SecurityContext = &corev1.SecurityContext{
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: new("profiles/allow.json")},
	}
	plain := shContainer("plain", sleepForever)
	plain.SecurityContext = &corev1.SecurityContext{
		RunAsUser:      new(int64(0)), // the container's value wins over the pod's
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
	}
	pod := testPod("secure", restricted, netAdmin, plain)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsGroup:         new(int64(2000)),
		SupplementalGroups: []int64{3000},
		FSGroup:            new(int64(4000)),
		SeccompProfile:     &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:            []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}},
	}
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	// A pod that sets nothing: the kubelet's defaults.
	bare := testPod("bare", shContainer("main", sleepForever))
	h.writeManifest(pod)
	h.writeManifest(bare)
	for _, c := range []string{"restricted", "netadmin", "plain"} {
		h.waitPod("secure", c+" running", 60*time.Second, runningContainer(c))
	}
	h.waitPod("bare", "running", 60*time.Second, runningContainer("main"))

	const capNetAdmin = "0000000000001000" // 1 << CAP_NET_ADMIN (12)
	for _, tc := range []struct {
		pod, container string
		want           map[string]string
	}{
		{"secure", "restricted", map[string]string{"Uid": "1000 1000 1000 1000", "Gid": "2000 2000 2000 2000", "Groups": "2000 3000 4000",
			"NoNewPrivs": "1", "Seccomp": "2", "CapEff": "0000000000000000", "CapBnd": "0000000000000000"}},
		{"secure", "netadmin", map[string]string{"Uid": "0 0 0 0", "Gid": "2000 2000 2000 2000", "NoNewPrivs": "0", "Seccomp": "2",
			"CapEff": capNetAdmin, "CapBnd": capNetAdmin}},
		{"secure", "plain", map[string]string{"Uid": "0 0 0 0", "NoNewPrivs": "0", "Seccomp": "0"}},
		// Unset: seccomp Unconfined and no_new_privs off, as the kubelet does.
		{"bare", "main", map[string]string{"Uid": "0 0 0 0", "Gid": "0 0 0 0", "NoNewPrivs": "0", "Seccomp": "0"}},
	} {
		st := h.procStatus(tc.pod, tc.container)
		for k, want := range tc.want {
			got := st[k]
			if k == "Groups" {
				got = sortedFields(got)
			}
			if got != want {
				t.Errorf("%s/%s: /proc/1/status %s = %q, want %q", tc.pod, tc.container, k, got, want)
			}
		}
	}

	// The sandbox's pause process runs under the pod's seccomp profile and
	// in its groups, as the kubelet sets them; a pod that sets nothing
	// leaves it Unconfined.
	for _, tc := range []struct{ pod, seccomp string }{{"secure", "2"}, {"bare", "0"}} {
		st := h.sandboxProcStatus(tc.pod)
		if st["Seccomp"] != tc.seccomp {
			t.Errorf("%s: the pause process's Seccomp = %q, want %q", tc.pod, st["Seccomp"], tc.seccomp)
		}
		if tc.pod == "secure" && sortedFields(st["Groups"]) != "3000 4000" {
			t.Errorf("secure: the pause process's Groups = %q, want 3000 4000 (supplemental and fsGroup)", st["Groups"])
		}
	}

	defaultCaps := h.procStatus("bare", "main")["CapEff"]

	// readOnlyRootFilesystem: the root refuses writes, the emptyDir takes
	// them, and what is written there belongs to the fsGroup.
	if out := h.exec("secure", "restricted", "sh", "-c", "touch /probe 2>&1 && echo writable || true"); !strings.Contains(out, "Read-only file system") {
		t.Errorf("writing the read-only root: %q, want Read-only file system", out)
	}
	if out := h.exec("secure", "restricted", "sh", "-c", "touch /data/f && stat -c %g /data/f"); strings.TrimSpace(out) != "4000" {
		t.Errorf("group of a file written to the emptyDir: %q, want the fsGroup 4000", out)
	}
	if out := h.exec("bare", "main", "sh", "-c", "touch /probe && echo writable"); strings.TrimSpace(out) != "writable" {
		t.Errorf("writing the root of a default container: %q", out)
	}
	// The pod's sysctl, in the pod's own IPC namespace.
	if out := h.exec("secure", "plain", "cat", "/proc/sys/kernel/shm_rmid_forced"); strings.TrimSpace(out) != "1" {
		t.Errorf("kernel.shm_rmid_forced in the pod = %q, want 1", out)
	}

	// privileged: every capability the runtime has, CAP_SYS_ADMIN among
	// them, which a default container lacks. It reports them in its log,
	// and comes last: twice, execs failed in runc (setns, init-p broken
	// pipe) while a privileged container ran beside those of this test;
	// 120 execs with one running did not fail again.
	priv := shContainer("main", "grep CapEff /proc/1/status; "+sleepForever)
	priv.SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
	h.writeManifest(testPod("priv", priv))
	privPod := h.waitPod("priv", "running", 60*time.Second, runningContainer("main"))
	const capSysAdmin = 1 << 21
	privCaps := ""
	logPath := filepath.Join(h.dir, "logs", "default_"+privPod.Name+"_"+privPod.UID, "main", "0.log")
	deadline := time.Now().Add(10 * time.Second)
	for privCaps == "" && time.Now().Before(deadline) {
		b, _ := os.ReadFile(logPath)
		if _, after, ok := strings.Cut(string(b), "CapEff:"); ok {
			privCaps, _, _ = strings.Cut(strings.TrimSpace(after), "\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for c, caps := range map[string]string{"privileged": privCaps, "default": defaultCaps} {
		capEff, err := strconv.ParseUint(strings.TrimSpace(caps), 16, 64)
		if want := c == "privileged"; err != nil || (capEff&capSysAdmin != 0) != want {
			t.Errorf("%s container: CapEff %q (%v), want CAP_SYS_ADMIN %v", c, caps, err, want)
		}
	}
}

func sortedFields(s string) string {
	f := strings.Fields(s)
	slices.Sort(f)
	return strings.Join(f, " ")
}

// What the node cannot honour is refused, never dropped: the containers
// wait with CreateContainerConfigError, the message naming the field, and
// nothing of them runs.
func TestBinarySecurityContextRefused(t *testing.T) {
	h := newAgent(t)
	nonRoot := shContainer("app", sleepForever)
	nonRoot.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: new(true)} // the busybox image runs as root
	appArmor := shContainer("app", sleepForever)
	appArmor.SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
	noProfile := testPod("noprofile", shContainer("app", sleepForever))
	noProfile.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{
		Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: new("missing.json")}}
	seLinux := testPod("selinux", shContainer("app", sleepForever))
	seLinux.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1,c2"}}
	windows := shContainer("app", sleepForever)
	windows.SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: new("ContainerUser")}}
	strict := testPod("strict", shContainer("app", sleepForever))
	strict.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroupsPolicy: new(corev1.SupplementalGroupsPolicyStrict)}
	userns := testPod("userns", shContainer("app", sleepForever))
	userns.Spec.HostUsers = new(false)
	stopSignal := shContainer("app", sleepForever)
	stopSignal.Lifecycle = &corev1.Lifecycle{StopSignal: new(corev1.SIGUSR1)}
	bidirectional := shContainer("app", sleepForever)
	bidirectional.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch", MountPropagation: new(corev1.MountPropagationBidirectional)}}
	bidiPod := testPod("bidi", bidirectional)
	bidiPod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	for _, pod := range []*corev1.Pod{testPod("nonroot", nonRoot), testPod("apparmor", appArmor), noProfile, seLinux, testPod("windows", windows), strict, userns,
		testPod("stopsignal", stopSignal), bidiPod} {
		h.writeManifest(pod)
	}

	for _, tc := range []struct{ pod, message string }{
		{"nonroot", `container "app": securityContext.runAsNonRoot is true but the image runs as root`},
		// Whether the kernel or containerd lacks AppArmor, the field is named.
		{"apparmor", `container "app": securityContext.appArmorProfile.type is RuntimeDefault, but`},
		{"noprofile", `container "app": spec.securityContext.seccompProfile.localhostProfile names ` +
			filepath.Join(h.dir, "root", "seccomp", "missing.json") + `, which cannot be read`},
		{"windows", `container "app": securityContext.windowsOptions is set, but this node runs Linux containers`},
		{"strict", `container "app": spec.securityContext.supplementalGroupsPolicy is Strict, but the container runtime does not support it`},
		{"userns", `container "app": spec.hostUsers is false, but this agent does not run pods in user namespaces`},
		// This machine's containerd is older than 2.1.
		{"stopsignal", `lifecycle.stopSignal SIGUSR1: containerd 1.`},
		{"bidi", `volumeMount /scratch: mountPropagation Bidirectional is only for privileged containers`},
	} {
		p := h.waitPod(tc.pod, "refused", 60*time.Second, func(p localapi.Pod) bool {
			c := findContainer(p, "app")
			return c != nil && c.Reason == "CreateContainerConfigError"
		})
		if c := findContainer(p, "app"); c.State != localapi.StateWaiting || !strings.Contains(c.Message, tc.message) {
			t.Errorf("pod %s: container %s %s %q, want waiting with a message containing %q", tc.pod, c.State, c.Reason, c.Message, tc.message)
		}
		if running := h.containers(tc.pod, true); len(running) > 0 {
			t.Errorf("pod %s: %d container(s) run", tc.pod, len(running))
		}
	}
	// seLinuxOptions on a node without SELinux: nothing to label, and the
	// pod runs, as under the kubelet.
	h.waitPod("selinux", "running", 60*time.Second, runningContainer("app"))
	// Nothing at all of a pod refused before its sandbox.
	if sbs := h.sandboxes("noprofile"); len(sbs) > 0 {
		t.Errorf("pod noprofile: %d sandbox(es), want none", len(sbs))
	}
}

// Two pods asking for one host port: the first keeps it, the second is
// held back with a status naming the port and the first pod, and starts
// once the first is removed.
func TestBinaryHostPortConflict(t *testing.T) {
	h := newAgent(t)
	port := freePort(t)
	withPort := func(name string) *corev1.Pod {
		c := shContainer("main", sleepForever)
		c.Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
		return testPod(name, c)
	}
	h.writeManifest(withPort("first"))
	h.waitPod("first", "running", 60*time.Second, runningContainer("main"))
	h.writeManifest(withPort("second"))
	p := h.waitPod("second", "held back", 30*time.Second, func(p localapi.Pod) bool { return p.Reason == "HostPortConflict" })
	want := regexp.MustCompile(fmt.Sprintf(`^host port %d/TCP of container "main" is held by container "main" \(%d/TCP\) of pod default/%s \(uid [0-9a-f]+\)`, port, port, h.podName("first")))
	if !want.MatchString(p.Message) || p.WorkerPhase != "refused" || p.Phase != "Pending" {
		t.Errorf("second pod: phase %s worker %s message %q, want Pending, refused, and a message matching %s", p.Phase, p.WorkerPhase, p.Message, want)
	}
	time.Sleep(3 * time.Second) // several housekeeping passes
	if sbs := h.sandboxes("second"); len(sbs) > 0 {
		t.Fatalf("the held-back pod has %d sandbox(es)", len(sbs))
	}

	h.removeManifest("first")
	h.waitPod("second", "running once the first is gone", 60*time.Second, runningContainer("main"))
	if sbs := h.sandboxes("first"); len(sbs) > 0 {
		t.Errorf("the second pod runs while the first still has %d sandbox(es)", len(sbs))
	}
}

func freePort(t *testing.T) int32 {
	addr := freeAddress(t)
	_, p, _ := strings.Cut(addr, ":")
	var n int32
	fmt.Sscan(p, &n)
	return n
}
