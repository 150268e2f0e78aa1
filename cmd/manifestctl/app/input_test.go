package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

func TestStandardInputIsAManifestForValidateDiffAndApply(t *testing.T) {
	s := newSetup(t)
	s.stdin = pod("web", "img:1")
	if code, out, errOut := s.run("validate", "-f", "-"); code != exitOK || !strings.Contains(out, stdinName+": valid (1 pod: [web-node1_default])") {
		t.Errorf("validate -f -: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := s.run("diff", "-f", "-"); code != exitFailure || !strings.Contains(out, "new pod") {
		t.Errorf("diff -f - of a new pod: exit %d, stdout %q, stderr %q; want exit 1 and the new pod", code, out, errOut)
	}
	// A new manifest from stdin is named for its pod.
	target := filepath.Join(s.manifests, "web.yaml")
	if code, out, errOut := s.run("apply", "-f", "-"); code != exitOK || !strings.Contains(out, target+" created") {
		t.Fatalf("apply -f -: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != s.stdin {
		t.Fatalf("%s holds %q, %v; want the standard input", target, b, err)
	}
	if code, out, errOut := s.run("diff", "-f", "-"); code != exitOK || !strings.Contains(out, "no change") {
		t.Errorf("diff -f - of the applied pod: exit %d, stdout %q, stderr %q; want exit 0", code, out, errOut)
	}
	// A changed version from stdin goes over the file that defines the pod.
	s.stdin = pod("web", "img:2")
	if code, out, errOut := s.run("apply", "-f", "-"); code != exitOK || !strings.Contains(out, target+" configured") {
		t.Errorf("apply -f - of a new version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// -f FILE is FILE.
	file := s.write("db.yaml", pod("db", "img:1"))
	if code, out, errOut := s.run("apply", "-f", file); code != exitOK || !strings.Contains(out, "db.yaml created") {
		t.Errorf("apply -f FILE: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestStandardInputIsBounded(t *testing.T) {
	s := newSetup(t)
	s.stdin = pod("web", "img:1") + "# " + strings.Repeat("x", manifest.MaxManifestBytes) + "\n"
	for _, cmd := range []string{"validate", "diff", "apply"} {
		code, _, errOut := s.run(cmd, "-f", "-")
		if code == exitOK || !strings.Contains(errOut, stdinName+": larger than a manifest may be") {
			t.Errorf("%s -f - of %d bytes: exit %d, stderr %q", cmd, len(s.stdin), code, errOut)
		}
	}
	if len(s.files()) != 0 {
		t.Errorf("apply wrote %v", s.files())
	}
}

func TestOneManifestAtATime(t *testing.T) {
	s := newSetup(t)
	a, b := s.write("a.yaml", pod("a", "i")), s.write("b.yaml", pod("b", "i"))
	for _, args := range [][]string{{"apply", "-f", a, b}, {"apply", "-f", a, "-f", b}, {"diff", "-f", a, b}, {"apply"}, {"diff"}, {"validate"}} {
		if code, _, errOut := s.run(args...); code != exitUsage {
			t.Errorf("%v: exit %d, stderr %q; want %d", args, code, errOut, exitUsage)
		}
	}
}
