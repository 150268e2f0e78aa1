package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Where the hack scripts keep their state; NODEAGENT_TEST_DIR moves it.
func stateDir() string {
	if d := os.Getenv("NODEAGENT_TEST_DIR"); d != "" {
		return d
	}
	return "/var/lib/nodeagent-test"
}

// The control plane may have to be built from source on a cold machine.
const upTimeout = 20 * time.Minute

// Run brings the environment up, stores it in *env, runs the tests and
// tears everything down. It returns the exit code for os.Exit: non-zero if
// the environment failed to start, a test failed, the tests left pods in
// containerd, or a part did not stop.
func Run(m *testing.M, env **Env) int {
	root, err := repoRoot()
	if err != nil {
		return fail("locating the repository: %v", err)
	}
	unlock, err := lockEnvironment()
	if err != nil {
		return fail("%v", err)
	}
	defer unlock()
	e, err := up(root)
	if err != nil {
		code := fail("the test environment did not start: %v", err)
		_ = down(root) // stop whatever did start
		return code
	}
	// Pods from elsewhere (a `make run` left running, say) would be taken
	// for the tests' leftovers; refuse to start rather than blame the tests.
	if err := e.checkRuntimeEmpty(context.Background()); err != nil {
		code := fail("before the tests: %v; stop whatever runs them (for `make run`: remove its manifests, or run hack/containerd-down.sh)", err)
		// containerd-down.sh would remove those pods: leave containerd be.
		_ = script(root, "controlplane-down.sh", "--purge")
		return code
	}
	*env = e
	code := m.Run()
	if err := e.checkRuntimeEmpty(context.Background()); err != nil {
		code = fail("after the tests: %v", err)
	}
	// Read before teardown deletes it with the state dir.
	if events, err := e.AuditEvents(); err != nil {
		code = fail("reading the apiserver's audit log: %v", err)
	} else if err := forbiddenToNodes(events); err != nil {
		code = fail("%v", err)
	}
	if err := down(root); err != nil {
		code = fail("tearing down: %v", err)
	}
	if e.Registry != nil {
		os.RemoveAll(e.Registry.layoutDir)
	}
	for name, p := range e.pids {
		if p.alive() {
			code = fail("%s (pid %d) still runs after teardown", name, p.pid)
		}
	}
	return code
}

// lockEnvironment serialises test packages machine-wide: the environment
// uses fixed names (bridge, cgroup parents, state directories), so two
// packages sharing it would tear it down under each other.
func lockEnvironment() (unlock func(), err error) {
	if os.Getenv("NODEAGENT_TEST_LOCK_HELD") != "" {
		return func() {}, nil // hack/test-integration.sh holds it for us
	}
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir(), "integration.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(os.Stderr, "integration framework: waiting for another test run to release %s\n", path)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "FAIL integration framework: "+format+"\n", args...)
	return 1
}

func up(root string) (*Env, error) {
	dir := stateDir()
	if err := script(root, "containerd-up.sh"); err != nil {
		return nil, err
	}
	if err := script(root, "controlplane-up.sh"); err != nil {
		return nil, err
	}
	ctrd, err := readEnvFile(filepath.Join(dir, "containerd", "env"))
	if err != nil {
		return nil, err
	}
	if err := need("containerd env", ctrd, "CONTAINERD_SOCKET", "CONTAINERD_PID", "PAUSE_IMAGE", "BUSYBOX_IMAGE", "BUSYBOX_IMAGE_TAR", "CONTAINER_LOG_ROOT"); err != nil {
		return nil, err
	}
	e := &Env{
		RepoRoot:     root,
		CRIEndpoint:  "unix://" + strings.TrimPrefix(ctrd["CONTAINERD_SOCKET"], "unix://"),
		PauseImage:   ctrd["PAUSE_IMAGE"],
		BusyboxImage: ctrd["BUSYBOX_IMAGE"],
		LogRoot:      ctrd["CONTAINER_LOG_ROOT"],
		pids:         map[string]process{},
	}
	if pid, err := strconv.Atoi(ctrd["CONTAINERD_PID"]); err == nil {
		e.pids["containerd"] = processOf(pid)
	}
	if err := e.startRegistry(root, ctrd["BUSYBOX_IMAGE_TAR"]); err != nil {
		return nil, err
	}
	cp, err := e.readControlPlaneEnv()
	if err != nil {
		return nil, err
	}
	e.NodeName = cp["NODE_NAME"]
	e.APIServerURL = cp["APISERVER_URL"]
	e.CAFile = cp["CLUSTER_CA_CERT"]
	e.CAKeyFile = cp["CLUSTER_CA_KEY"]
	e.KubectlBin, e.MetricsServerBin = cp["KUBECTL_BIN"], cp["METRICS_SERVER_BIN"]
	e.auditLog = cp["AUDIT_LOG"]
	if e.NodeMonitorGracePeriod, err = time.ParseDuration(cp["NODE_MONITOR_GRACE_PERIOD"]); err != nil {
		return nil, fmt.Errorf("control plane env: NODE_MONITOR_GRACE_PERIOD: %w", err)
	}
	if e.AdminConfig, e.AdminClient, err = clientFor(cp["KUBECONFIG_ADMIN"]); err != nil {
		return nil, err
	}
	if e.NodeConfig, e.NodeClient, err = clientFor(cp["KUBECONFIG_NODE"]); err != nil {
		return nil, err
	}
	return e, nil
}

// readControlPlaneEnv reads the env file controlplane-up.sh writes and
// records the PIDs of the processes it names, which change when a test
// restarts one.
func (e *Env) readControlPlaneEnv() (map[string]string, error) {
	path := filepath.Join(stateDir(), "controlplane", "env")
	cp, err := readEnvFile(path)
	if err != nil {
		return nil, err
	}
	if err := need(path, cp, "KUBECONFIG_ADMIN", "KUBECONFIG_NODE", "NODE_NAME", "APISERVER_URL", "CLUSTER_CA_CERT",
		"AUDIT_LOG", "NODE_MONITOR_GRACE_PERIOD", "ETCD_PID", "CLUSTER_CA_KEY", "KUBECTL_BIN", "METRICS_SERVER_BIN"); err != nil {
		return nil, err
	}
	for name, key := range map[string]string{"etcd": "ETCD_PID", "kube-apiserver": "APISERVER_PID", "kube-controller-manager": "CONTROLLER_MANAGER_PID"} {
		// A stopped component's PID is empty; the last one is kept, so the
		// teardown check still covers it.
		if pid, err := strconv.Atoi(cp[key]); err == nil {
			e.pids[name] = processOf(pid)
		}
	}
	return cp, nil
}

func down(root string) error {
	return errors.Join(
		script(root, "registry-down.sh", "--purge"),
		script(root, "controlplane-down.sh", "--purge"),
		script(root, "containerd-down.sh"),
	)
}

// script runs hack/<name> with the state directories this package uses,
// its output going to the test's stderr.
func script(root, name string, args ...string) error {
	return scriptEnv(root, nil, name, args...)
}

// scriptEnv is script with extra environment variables ("KEY=VALUE").
func scriptEnv(root string, extraEnv []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), upTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "hack", name)}, args...)...)
	cmd.Dir = root
	// The extra variables come last, so that they win: a second
	// containerd has a directory of its own.
	cmd.Env = append(append(os.Environ(),
		"NODEAGENT_CONTAINERD_DIR="+filepath.Join(stateDir(), "containerd"),
		"NODEAGENT_CONTROLPLANE_DIR="+filepath.Join(stateDir(), "controlplane"),
		"NODEAGENT_REGISTRY_DIR="+filepath.Join(stateDir(), "registry"),
	), extraEnv...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/%s: %w", name, err)
	}
	return nil
}

// repoRoot walks up from the working directory to the one holding go.work.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// process is one process, known by its PID and its start time: a PID may
// be reused by another process once this one has ended (a restarted
// containerd's old PID, on a busy machine).
type process struct {
	pid   int
	start string
}

// processOf is the process that has pid now.
func processOf(pid int) process { return process{pid: pid, start: startTime(pid)} }

// alive reports whether the process still runs.
func (p process) alive() bool {
	return alive(p.pid) && startTime(p.pid) == p.start
}

// startTime is the start time field of /proc/<pid>/stat, or "" if it
// cannot be read.
func startTime(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The fields after the parenthesised command name: state is the
	// first, starttime the 20th.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// alive reports whether pid runs. A zombie does not count: a daemon started
// in the background by a script is reparented, and its reaper may be slow.
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
