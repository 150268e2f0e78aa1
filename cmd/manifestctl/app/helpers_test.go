package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const testNode = "node1"

// testSetup is a manifest directory and a state directory with no agent
// running, and manifestctl's settings for them.
type testSetup struct {
	t         *testing.T
	dir       string
	manifests string
	config    string
	stdin     string // what run gives manifestctl on its standard input
}

func newSetup(t *testing.T) *testSetup {
	t.Helper()
	dir := t.TempDir()
	s := &testSetup{t: t, dir: dir, manifests: filepath.Join(dir, "manifests"), config: filepath.Join(dir, "nodeagent.yaml")}
	if err := os.Mkdir(s.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "manifest-dir: " + s.manifests + "\nroot-dir: " + filepath.Join(dir, "root") + "\nnode-name: " + testNode +
		"\npod-log-dir: " + filepath.Join(dir, "logs") + "\ncri-endpoint: unix:///nowhere.sock\n"
	s.write("nodeagent.yaml", cfg)
	return s
}

func (s *testSetup) write(name, body string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// run runs manifestctl with the setup's config file.
func (s *testSetup) run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"--config", s.config}, args...), strings.NewReader(s.stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func (s *testSetup) files() []string {
	s.t.Helper()
	entries, err := os.ReadDir(s.manifests)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func pod(name, image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  containers: [{name: c, image: \"" + image + "\"}]\n"
}

func metav1ObjectMeta(name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}
}
