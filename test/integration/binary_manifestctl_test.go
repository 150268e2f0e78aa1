package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifestctlBinary builds cmd/manifestctl once per test process.
func manifestctlBinary(t testing.TB) string { return binary(t, "manifestctl") }

// mctl runs manifestctl on h's state, through a config file in the form
// nodeagent reads (manifestctl takes its defaults from it).
type mctl struct {
	t      testing.TB
	h      *agentHarness
	config string
}

func newMctl(t testing.TB, h *agentHarness) *mctl {
	cfg := filepath.Join(h.dir, "nodeagent.yaml")
	body := fmt.Sprintf("manifest-dir: %s\nroot-dir: %s\npod-log-dir: %s\nlocal-api-socket: %s\nnode-name: %s\ncri-endpoint: %s\n",
		h.manifests, filepath.Join(h.dir, "root"), filepath.Join(h.dir, "logs"), h.socket, h.node, env.CRIEndpoint)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &mctl{t: t, h: h, config: cfg}
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

func (m *mctl) run(args ...string) result {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, manifestctlBinary(m.t), append([]string{"--config", m.config}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		m.t.Fatalf("manifestctl %v: %v", args, err)
	}
	return r
}

// must runs manifestctl and requires the exit code.
func (m *mctl) must(code int, args ...string) result {
	m.t.Helper()
	r := m.run(args...)
	if r.code != code {
		m.t.Fatalf("manifestctl %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

func (m *mctl) writeFile(name string, pod *corev1.Pod) string {
	m.t.Helper()
	data, err := yaml.Marshal(pod)
	if err != nil {
		m.t.Fatal(err)
	}
	path := filepath.Join(m.h.dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		m.t.Fatal(err)
	}
	return path
}

func contains(t testing.TB, what string, r result, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("%s: output lacks %q:\n%s", what, s, r)
		}
	}
}

func (m *mctl) manifestFiles() []string {
	entries, err := os.ReadDir(m.h.manifests)
	if err != nil {
		m.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestBinaryManifestctl runs the built manifestctl against the built
// nodeagent on the real containerd, through an operator's day: a refused
// file, apply --wait, every output of get, diff, an edit, describe, logs,
// rollback, a crashing pod, rm --wait.
func TestBinaryManifestctl(t *testing.T) {
	h := newAgent(t)
	m := newMctl(t, h)
	web := testPod("web", shContainer("c", `i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.2; done`))
	webFile := m.writeFile("web.yaml", web)

	t.Run("an invalid file is refused and nothing is written", func(t *testing.T) {
		bad := web.DeepCopy()
		bad.Spec.Containers[0].Image = ""
		badFile := m.writeFile("web-bad.yaml", bad)
		r := m.must(1, "apply", "--wait", badFile)
		contains(t, "apply of an invalid file", r, badFile, "spec.containers[0].image")
		if files := m.manifestFiles(); len(files) != 0 {
			t.Errorf("the manifest directory holds %v after a refused apply, want nothing", files)
		}
		r = m.must(1, "validate", badFile, webFile)
		contains(t, "validate", r, badFile+": spec.containers[0].image: Required value", webFile+": valid", "1 manifest would be refused")
	})

	var firstUID string
	t.Run("apply --wait of a good pod exits 0 once it runs", func(t *testing.T) {
		r := m.must(0, "apply", "--wait", "--timeout", "60s", webFile)
		contains(t, "apply --wait", r, "pod/"+h.podName("web")+" running")
		p, err := h.client.Pod(context.Background(), "default", h.podName("web"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Phase != "Running" || len(h.runningIDs("web")) != 1 {
			t.Fatalf("after apply --wait the agent shows phase %s and the runtime %d running containers, want Running and 1", p.Phase, len(h.runningIDs("web")))
		}
		firstUID = p.UID
		if _, err := os.Stat(filepath.Join(h.manifests, "web.yaml")); err != nil {
			t.Errorf("the manifest was not written under its name: %v", err)
		}
	})

	t.Run("get in every output format", func(t *testing.T) {
		name := h.podName("web")
		r := m.must(0, "get")
		contains(t, "get", r, "NAME", "READY", "STATUS", "RESTARTS", "AGE", name, "1/1", "Running")
		r = m.must(0, "get", "-o", "wide", "web")
		contains(t, "get -o wide", r, "SOURCE", "FILE", "UID", "MIRROR", filepath.Join(h.manifests, "web.yaml"), firstUID)
		r = m.must(0, "list", "-o", "name")
		if strings.TrimSpace(r.stdout) != "pod/"+name {
			t.Errorf("get -o name: %q, want pod/%s", r.stdout, name)
		}
		// -o json and -o yaml print a v1 List of Pods, as kubectl get.
		var l corev1.List
		r = m.must(0, "get", "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Kind != "List" || len(l.Items) != 1 {
			t.Fatalf("get -o json: %v, %+v\n%s", err, l, r)
		}
		var p corev1.Pod
		if err := json.Unmarshal(l.Items[0].Raw, &p); err != nil || p.Kind != "Pod" || p.Status.Phase != corev1.PodRunning || p.Spec.Containers[0].Image != web.Spec.Containers[0].Image {
			t.Errorf("get -o json: item %v, %+v", err, p)
		}
		r = m.must(0, "get", "-o", "yaml")
		if err := yaml.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Items) != 1 {
			t.Fatalf("get -o yaml: %v, %+v\n%s", err, l, r)
		}
		if err := json.Unmarshal(l.Items[0].Raw, &p); err != nil || string(p.UID) != firstUID {
			t.Errorf("get -o yaml: item %v, uid %s, want %s", err, p.UID, firstUID)
		}
		r = m.must(0, "get", "-o", "jsonpath={.items[*].metadata.uid}")
		if r.stdout != firstUID {
			t.Errorf("get -o jsonpath: %q, want %q", r.stdout, firstUID)
		}
		m.must(1, "get", "nosuchpod")
		m.must(2, "get", "-o", "table")
	})

	edited := web.DeepCopy()
	edited.Spec.Containers[0].Env = []corev1.EnvVar{envVar("GENERATION", "2")}
	editedFile := m.writeFile("web-v2.yaml", edited)

	t.Run("diff says field by field what changes", func(t *testing.T) {
		r := m.must(1, "diff", editedFile)
		contains(t, "diff", r, `+ spec.containers[0].env: [{"name":"GENERATION","value":"2"}]`, "new pod generation: config hash "+firstUID)
		r = m.must(0, "diff", webFile)
		contains(t, "diff of the running version", r, "no change")
	})

	var secondUID string
	t.Run("apply --wait of an edit replaces the file and runs the new generation", func(t *testing.T) {
		r := m.must(0, "apply", "--wait", "--timeout", "60s", editedFile)
		contains(t, "apply of the edit", r, filepath.Join(h.manifests, "web.yaml")+" configured")
		if files := m.manifestFiles(); len(files) != 1 || files[0] != "web.yaml" {
			t.Errorf("manifest directory: %v, want only web.yaml (the file defining the pod is replaced)", files)
		}
		p, err := h.client.Pod(context.Background(), "default", h.podName("web"))
		if err != nil || p.UID == firstUID || p.Phase != "Running" {
			t.Fatalf("after the edit: uid %s (first %s), phase %s, err %v", p.UID, firstUID, p.Phase, err)
		}
		secondUID = p.UID
	})

	t.Run("describe shows the timeline", func(t *testing.T) {
		r := m.must(0, "describe", "web")
		contains(t, "describe", r, "Manifest:", filepath.Join(h.manifests, "web.yaml"), "Status:", "Running", "Containers:", "Timeline:", "seen", "worker", "runtime")
	})

	t.Run("logs, --tail, --timestamps and -f", func(t *testing.T) {
		// The container writes a line every 0.2 s: wait for three.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if r := m.must(0, "logs", "web"); strings.Count(r.stdout, "\n") >= 3 {
				break
			}
		}
		r := m.must(0, "logs", "web", "--tail", "2")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "line ") {
			t.Errorf("logs --tail 2: %q, want two 'line N' lines", lines)
		}
		r = m.must(0, "logs", "web", "--timestamps", "--tail", "1")
		if _, err := time.Parse(time.RFC3339Nano, strings.Fields(r.stdout + " x")[0]); err != nil {
			t.Errorf("logs --timestamps: %q does not start with a time: %v", r.stdout, err)
		}
		m.must(1, "logs", "web", "--previous")

		cmd := exec.Command(manifestctlBinary(t), "--config", m.config, "logs", "-f", "--tail", "0", "web")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 10)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				got <- sc.Text()
			}
			close(got)
		}()
		// New lines, written after the command started, arrive.
		for i := 0; i < 3; i++ {
			select {
			case l := <-got:
				if !strings.HasPrefix(l, "line ") {
					t.Errorf("logs -f printed %q", l)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("logs -f printed no new line within 5s")
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("logs -f after SIGINT: %v, want exit 0", err)
		}
	})

	t.Run("rollback --wait runs the previous version again", func(t *testing.T) {
		m.must(0, "rollback", "--wait", "--timeout", "60s", "web")
		p, err := h.client.Pod(context.Background(), "default", h.podName("web"))
		if err != nil || p.UID != firstUID || p.Phase != "Running" {
			t.Fatalf("after rollback: uid %s, want the first generation's %s; phase %s, err %v", p.UID, firstUID, p.Phase, err)
		}
		r := m.must(1, "diff", editedFile)
		contains(t, "diff after rollback", r, "config hash "+firstUID+" -> "+secondUID)
	})

	t.Run("apply --wait of a pod whose container exits 1 fails with the reason and its log", func(t *testing.T) {
		crash := testPod("crash", shContainer("c", "echo about to fail; echo boom >&2; exit 1"))
		r := m.must(1, "apply", "--wait", "--timeout", "60s", m.writeFile("crash.yaml", crash))
		contains(t, "apply --wait of a failing pod", r, "pod "+h.podName("crash")+" failed", "container c exited with code 1", "about to fail", "boom")
		m.must(0, "rm", "--wait", "crash")
	})

	t.Run("get lists refused and duplicate manifests with the reason", func(t *testing.T) {
		// Written behind manifestctl's back, as an editor would.
		h.writeRaw("broken.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {containers: [{name: c}]}\n"))
		dup, err := os.ReadFile(filepath.Join(h.manifests, "web.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		h.writeRaw("web-copy.yaml", dup)
		var r result
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			r = m.must(0, "get")
			if strings.Contains(r.stdout, "broken.yaml") && strings.Contains(r.stdout, "web-copy.yaml") {
				break
			}
		}
		contains(t, "get with refused manifests", r, "REFUSED MANIFEST", "REASON",
			filepath.Join(h.manifests, "broken.yaml"), "Invalid", "spec.containers[0].image",
			filepath.Join(h.manifests, "web-copy.yaml"), "DuplicateName")
		os.Remove(filepath.Join(h.manifests, "broken.yaml"))
		os.Remove(filepath.Join(h.manifests, "web-copy.yaml"))
	})

	t.Run("rm --wait returns once the pod is gone", func(t *testing.T) {
		r := m.must(0, "rm", "--wait", "--timeout", "60s", "web")
		contains(t, "rm --wait", r, "removed", "pod/"+h.podName("web")+" gone")
		if n := len(h.runningIDs("web")); n != 0 {
			t.Errorf("%d containers of web still run after rm --wait", n)
		}
		pods, _ := h.client.Pods(context.Background())
		for _, p := range pods {
			if p.Name == h.podName("web") && p.WorkerPhase != "terminated" {
				t.Errorf("after rm --wait the agent shows web in phase %s", p.WorkerPhase)
			}
		}
		if len(m.manifestFiles()) != 0 {
			t.Errorf("manifest directory after rm: %v", m.manifestFiles())
		}
		// rm keeps a backup: rollback brings the pod back.
		m.must(0, "rollback", "--wait", "--timeout", "60s", "web")
		h.waitPod("web", "running after rollback of rm", 30*time.Second, runningContainer("c"))
		m.must(0, "rm", "--wait", "web")
	})
}

// TestBinaryManifestctlOffline stops the agent: the commands that can work
// on the directory alone do, and say the agent is not running.
func TestBinaryManifestctlOffline(t *testing.T) {
	h := newAgent(t)
	m := newMctl(t, h)
	h.stop()
	web := testPod("web", shContainer("c", sleepForever))
	webFile := m.writeFile("web.yaml", web)
	const offline = "nodeagent is not running"

	m.must(0, "validate", webFile)
	r := m.must(0, "apply", webFile)
	contains(t, "apply offline", r, offline, "created")
	if _, err := os.Stat(filepath.Join(h.manifests, "web.yaml")); err != nil {
		t.Fatalf("apply offline did not write the manifest: %v", err)
	}
	r = m.must(1, "apply", "--wait", webFile)
	contains(t, "apply --wait offline", r, offline, "cannot wait")
	r = m.must(0, "get")
	contains(t, "get offline", r, offline, h.podName("web"), "Unknown")
	r = m.must(0, "get", "-o", "json")
	if !strings.Contains(r.stdout, `"kind": "List"`) || !strings.Contains(r.stdout, `"name": "`+h.podName("web")+`"`) || !strings.Contains(r.stderr, offline) {
		t.Errorf("get -o json offline:\n%s", r)
	}
	edited := web.DeepCopy()
	edited.Spec.Containers[0].Env = []corev1.EnvVar{envVar("X", "1")}
	r = m.must(1, "diff", m.writeFile("web-v2.yaml", edited))
	contains(t, "diff offline", r, offline, "+ spec.containers[0].env: ")
	r = m.must(0, "describe", "web")
	contains(t, "describe offline", r, offline, "Manifest:", "not running")
	r = m.must(0, "rm", "web")
	contains(t, "rm offline", r, offline, "removed")
	if len(m.manifestFiles()) != 0 {
		t.Errorf("rm offline left %v", m.manifestFiles())
	}
}
