package config

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// parsedAt parses a one-pod manifest as the file source would at path.
func parsedAt(t *testing.T, path, name, image string) []*corev1.Pod {
	t.Helper()
	pods, err := manifest.ParseManifest([]byte(podManifest(name, image)), manifest.ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: path})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// holders renders who holds each full name: "web=/m/a.yaml ...".
func holders(st *fileState) string {
	var out []string
	for _, path := range st.paths() {
		for _, p := range st.entries[path].pods {
			out = append(out, strings.TrimSuffix(p.Name, "-node1")+"="+path)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// The duplicate-name rule as a transcript: each step changes what files
// define (path:name, or path:- for a removed file), then resolves.
func TestFileStateDuplicateNameRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hints map[string]string
		steps [][]string // each step: "path:name" written, "path:-" removed
		want  []string   // holders after each step
	}{
		{
			name:  "read together: the path that sorts first wins, in any order",
			steps: [][]string{{"/m/b.yaml:web", "/m/a.yaml:web"}},
			want:  []string{"web=/m/a.yaml"},
		},
		{
			name:  "the running pod keeps its name against a newcomer that sorts first",
			steps: [][]string{{"/m/b.yaml:web"}, {"/m/a.yaml:web"}},
			want:  []string{"web=/m/b.yaml", "web=/m/b.yaml"},
		},
		{
			name:  "the holder goes: the other takes the name",
			steps: [][]string{{"/m/b.yaml:web"}, {"/m/a.yaml:web"}, {"/m/b.yaml:-"}},
			want:  []string{"web=/m/b.yaml", "web=/m/b.yaml", "web=/m/a.yaml"},
		},
		{
			name:  "the holder renames its pod: the name goes to the other at once",
			steps: [][]string{{"/m/b.yaml:web"}, {"/m/a.yaml:web"}, {"/m/b.yaml:api"}},
			want:  []string{"web=/m/b.yaml", "web=/m/b.yaml", "api=/m/b.yaml web=/m/a.yaml"},
		},
		{
			name:  "after a restart, the hint keeps the name with its holder",
			hints: map[string]string{"web-node1_default": "/m/b.yaml"},
			steps: [][]string{{"/m/a.yaml:web", "/m/b.yaml:web"}},
			want:  []string{"web=/m/b.yaml"},
		},
		{
			name:  "a hint for a file that no longer defines the name is ignored",
			hints: map[string]string{"web-node1_default": "/m/b.yaml"},
			steps: [][]string{{"/m/a.yaml:web", "/m/b.yaml:api"}},
			want:  []string{"api=/m/b.yaml web=/m/a.yaml"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newFileState(tc.hints)
			for i, step := range tc.steps {
				for _, change := range step {
					path, name, _ := strings.Cut(change, ":")
					if name == "-" {
						st.drop(path)
						continue
					}
					e := st.entry(path)
					e.parsed, e.invalid = parsedAt(t, path, name, "img:"+fmt.Sprint(i)), nil
				}
				st.resolve()
				if got := holders(st); got != tc.want[i] {
					t.Fatalf("after step %d %v: holders %q, want %q", i+1, step, got, tc.want[i])
				}
			}
			for _, path := range st.paths() {
				e := st.entries[path]
				if len(e.pods) == 0 && (e.err == nil || !strings.Contains(e.err.Error(), "already defined by")) {
					t.Errorf("%s holds nothing, and its error %v does not name the holder", path, e.err)
				}
			}
		})
	}
}

// Whatever order the files of one window are read in, the outcome is the
// same.
func TestFileStateResolveIgnoresReadOrder(t *testing.T) {
	files := map[string]string{"/m/c.yaml": "web", "/m/a.yaml": "web", "/m/b.yaml": "api", "/m/d.yaml": "api", "/m/e.yaml": "db"}
	paths := slices.Sorted(maps.Keys(files))
	var first string
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		st := newFileState(nil)
		order := slices.Clone(paths)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, p := range order {
			e := st.entry(p)
			e.parsed = parsedAt(t, p, files[p], "img:1")
		}
		st.resolve()
		got := holders(st)
		if round == 0 {
			first = got
		} else if got != first {
			t.Fatalf("read order %v: holders %q, want %q as for the first order", order, got, first)
		}
	}
	if first != "api=/m/b.yaml db=/m/e.yaml web=/m/a.yaml" {
		t.Errorf("holders %q, want the paths that sort first", first)
	}
}
