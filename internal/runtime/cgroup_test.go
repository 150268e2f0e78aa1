package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
