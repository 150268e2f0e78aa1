package cgroups

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemoveCgroups(t *testing.T) {
	for _, tc := range []struct {
		name    string
		present []string // directories below the cgroup root
		gone    []string // which of them must be gone afterwards
		kept    []string
	}{{
		name: "cgroup v1: every hierarchy, nested containers first",
		present: []string{
			"memory/nodeagent/podu1/c1/sub", "memory/nodeagent/podu1/c2",
			"cpu,cpuacct/nodeagent/podu1/c1", "pids/nodeagent/podu1",
			"memory/nodeagent/podu2/c1",
		},
		gone: []string{"memory/nodeagent/podu1", "cpu,cpuacct/nodeagent/podu1", "pids/nodeagent/podu1"},
		kept: []string{"memory/nodeagent", "memory/nodeagent/podu2/c1"},
	}, {
		name:    "cgroup v2: the unified hierarchy",
		present: []string{"nodeagent/podu1/c1", "nodeagent/podu2"},
		gone:    []string{"nodeagent/podu1"},
		kept:    []string{"nodeagent/podu2"},
	}, {
		name: "nothing there",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tc.present {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// A second mount point of a v1 hierarchy, as cpu -> cpu,cpuacct.
			if err := os.Symlink("cpu,cpuacct", filepath.Join(root, "cpu")); err != nil {
				t.Fatal(err)
			}
			if err := removeCgroups(context.Background(), root, "/nodeagent/podu1"); err != nil {
				t.Fatalf("removeCgroups: %v", err)
			}
			for _, d := range tc.gone {
				if _, err := os.Stat(filepath.Join(root, d)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: %v, want it removed", d, err)
				}
			}
			for _, d := range tc.kept {
				if _, err := os.Stat(filepath.Join(root, d)); err != nil {
					t.Errorf("%s: %v, want it kept", d, err)
				}
			}
		})
	}
}

// removeCgroups removes only a pod's cgroup, and nothing a symlink in the
// cgroup file system leads out of it to.
func TestRemoveCgroupsStaysBeneathItsRoot(t *testing.T) {
	dir := t.TempDir()
	fsRoot, outside := filepath.Join(dir, "cgroup"), filepath.Join(dir, "outside")
	canary(t, outside)
	canary(t, filepath.Join(fsRoot, "memory", "nodeagent"))
	if err := os.Symlink(outside, filepath.Join(fsRoot, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "nodeagent", "podu1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, parent := range []string{"/", "/nodeagent", "/nodeagent/podu1/..", "/nodeagent/../"} {
		if err := removeCgroups(context.Background(), fsRoot, parent); err == nil {
			t.Errorf("removeCgroups(%q) = nil, want a refusal", parent)
		}
	}
	// evil/nodeagent/podu1 resolves outside: refused, the rest removed.
	if err := removeCgroups(context.Background(), fsRoot, "/nodeagent/podu1"); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("removeCgroups through a symlink out = %v, want a refusal naming it", err)
	}
	checkKept(t, outside, filepath.Join(fsRoot, "memory", "nodeagent"))
	if _, err := os.Stat(filepath.Join(outside, "nodeagent", "podu1")); err != nil {
		t.Errorf("the cgroup behind the symlink was removed: %v", err)
	}
}

func canary(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func checkKept(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "sub")); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
}
