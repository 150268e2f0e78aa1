package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PrivateContainerd is a containerd of one test's own, beside the shared
// one, with its root (images, snapshots) on a tmpfs of a given size: a
// test may fill it, or have images removed from it, without touching the
// images the other tests use. Its network, bridge and cgroup parent are
// its own too.
type PrivateContainerd struct {
	// Endpoint is its CRI socket, as "unix:///path".
	Endpoint string
	// Root is the tmpfs holding its images and snapshots.
	Root string
	// CgroupRoot is the --cgroup-root an agent on it must use: the
	// teardown removes the pod cgroups under it, and only those.
	CgroupRoot string
	CRI        *CRI
}

// StartPrivateContainerd starts a containerd in <state dir>/<name> (short:
// the socket path is bounded) with its root on a tmpfs of size (a mount
// option: "160m"), the pause and busybox images imported, trusting the
// tests' registry. Subnet is its pod network (a /24 no other containerd
// uses). It is stopped, its pods removed and its state deleted when the
// test ends. A part that cannot start fails the test.
func (e *Env) StartPrivateContainerd(t testing.TB, name, size, subnet string) *PrivateContainerd {
	t.Helper()
	dir := filepath.Join(stateDir(), name)
	cgroupParent := "nodeagent-" + name
	vars := []string{
		"NODEAGENT_CONTAINERD_DIR=" + dir,
		"NODEAGENT_CNI_NETWORK=nodeagent-" + name,
		"NODEAGENT_CNI_BRIDGE=na" + name + "0",
		"NODEAGENT_POD_SUBNET=" + subnet,
		// Never the shared parents (k8s.io, nodeagent): the down script
		// kills what runs in them.
		"NODEAGENT_CGROUP_PARENTS=" + cgroupParent,
	}
	down := func() error { return scriptEnv(e.RepoRoot, vars, "containerd-down.sh", "--purge") }
	// What an interrupted run left: its mounts, pods and state.
	if err := down(); err != nil {
		t.Fatalf("cleaning up an earlier private containerd: %v", err)
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", root).CombinedOutput(); err != nil {
		t.Fatalf("mounting a tmpfs of %s on %s: %v\n%s", size, root, err, out)
	}
	// The down script unmounts everything under the state dir, the tmpfs
	// included, before it deletes the directory.
	t.Cleanup(func() {
		if err := down(); err != nil {
			t.Errorf("stopping the private containerd: %v", err)
		}
		os.Remove(dir + ".lock") // the scripts' lock file, beside the state dir
	})
	if err := scriptEnv(e.RepoRoot, vars, "containerd-up.sh"); err != nil {
		t.Fatalf("starting the private containerd: %v", err)
	}
	vals, err := readEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	if err := need(dir+"/env", vals, "CONTAINERD_SOCKET"); err != nil {
		t.Fatal(err)
	}
	p := &PrivateContainerd{Endpoint: "unix://" + strings.TrimPrefix(vals["CONTAINERD_SOCKET"], "unix://"), Root: root, CgroupRoot: "/" + cgroupParent}
	if e.Registry != nil {
		// As hack/registry-up.sh makes the shared containerd trust it.
		host := e.Registry.Host
		hosts := fmt.Sprintf("server = \"https://%s\"\n\n[host.\"https://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n", host, host, e.Registry.CAFile)
		if err := os.MkdirAll(filepath.Join(dir, "certs.d", host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "certs.d", host, "hosts.toml"), []byte(hosts), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := dialCRI(p.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p.CRI = c
	return p
}
