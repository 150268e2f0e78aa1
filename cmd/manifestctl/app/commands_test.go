package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The commands that work on the directory alone, run as an operator would
// with the agent stopped.

func TestValidateNamesFileFieldAndReason(t *testing.T) {
	s := newSetup(t)
	good := s.write("good.yaml", pod("web", "img:1"))
	bad := s.write("bad.yaml", pod("web", ""))
	code, out, errOut := s.run("validate", good, bad)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(out, good+": valid") || !strings.Contains(errOut, bad+": spec.containers[0].image: Required value") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if code, _, _ := s.run("validate", good); code != exitOK {
		t.Errorf("validate of a good file: exit %d", code)
	}
	if code, _, _ := s.run("validate"); code != exitUsage {
		t.Errorf("validate without a file: exit %d, want %d", code, exitUsage)
	}
}

func TestApplyWritesAtomicallyAndKeepsABackup(t *testing.T) {
	s := newSetup(t)
	v1 := s.write("web.yaml", pod("web", "img:1"))
	code, out, errOut := s.run("apply", v1)
	if code != exitOK || !strings.Contains(out, "created") || !strings.Contains(errOut, "nodeagent is not running") {
		t.Fatalf("apply: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The edit goes over the file that defines the pod, whatever its name.
	v2 := s.write("web-v2.yaml", pod("web", "img:2"))
	if code, out, errOut := s.run("apply", v2); code != exitOK || !strings.Contains(out, "configured") {
		t.Fatalf("apply v2: exit %d, %q %q", code, out, errOut)
	}
	if got := s.files(); !slices.Equal(got, []string{"web.yaml"}) {
		t.Errorf("manifest directory %v, want [web.yaml] and no temporary file", got)
	}
	backup, err := os.ReadFile(filepath.Join(s.dir, "root", "manifest-backups", "web.yaml"))
	if err != nil || !strings.Contains(string(backup), "img:1") {
		t.Errorf("backup: %q, %v; want version 1", backup, err)
	}
	// An invalid version leaves the file as it was.
	bad := s.write("web-bad.yaml", pod("web", ""))
	if code, _, _ := s.run("apply", bad); code != exitFailure {
		t.Errorf("apply of an invalid file: exit %d", code)
	}
	if cur, _ := os.ReadFile(filepath.Join(s.manifests, "web.yaml")); !strings.Contains(string(cur), "img:2") {
		t.Errorf("after a refused apply the manifest holds %q, want version 2", cur)
	}
	// rollback puts version 1 back; a second rollback undoes it.
	if code, _, errOut := s.run("rollback", "web"); code != exitOK {
		t.Fatalf("rollback: exit %d: %s", code, errOut)
	}
	if cur, _ := os.ReadFile(filepath.Join(s.manifests, "web.yaml")); !strings.Contains(string(cur), "img:1") {
		t.Errorf("after rollback the manifest holds %q, want version 1", cur)
	}
	s.run("rollback", "web")
	if cur, _ := os.ReadFile(filepath.Join(s.manifests, "web.yaml")); !strings.Contains(string(cur), "img:2") {
		t.Errorf("after the second rollback the manifest holds %q, want version 2", cur)
	}
}

func TestApplyRefusesWhatTheAgentWouldRefuse(t *testing.T) {
	s := newSetup(t)
	if err := os.WriteFile(filepath.Join(s.manifests, "a.yaml"), []byte(pod("web", "img:1")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.manifests, "b.yaml"), []byte(pod("web", "img:1")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := s.run("apply", s.write("web.yaml", pod("web", "img:2")))
	if code != exitFailure || !strings.Contains(errOut, "two files") {
		t.Errorf("apply over a duplicate: exit %d, %q", code, errOut)
	}
	// A file of the same name defining another pod is not overwritten.
	code, _, errOut = s.run("apply", s.write("a.yaml", pod("other", "img:1")))
	if code != exitFailure || !strings.Contains(errOut, "defines other pods") {
		t.Errorf("apply over another pod's file: exit %d, %q", code, errOut)
	}
	code, _, errOut = s.run("apply", s.write("web.txt", pod("new", "img:1")))
	if code != exitFailure || !strings.Contains(errOut, "rename it") {
		t.Errorf("apply of a file the agent would not read: exit %d, %q", code, errOut)
	}
}

func TestGetAndRmWithoutTheAgent(t *testing.T) {
	s := newSetup(t)
	s.run("apply", s.write("web.yaml", pod("web", "img:1")))
	if err := os.WriteFile(filepath.Join(s.manifests, "broken.yaml"), []byte("kind: Pod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := s.run("get", "-o", "wide")
	if code != exitOK || !strings.Contains(out, "web-"+testNode) || !strings.Contains(out, "broken.yaml") || !strings.Contains(errOut, "not running") {
		t.Errorf("get: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "REFUSED MANIFEST") {
		t.Errorf("get: no header lines\n%s", out)
	}
	code, out, _ = s.run("get", "--no-headers")
	if code != exitOK || strings.Contains(out, "NAME") || strings.Contains(out, "REFUSED MANIFEST") || !strings.HasPrefix(out, "web-"+testNode) || !strings.Contains(out, "broken.yaml") {
		t.Errorf("get --no-headers: exit %d\n%s", code, out)
	}
	if code, out, _ := s.run("get", "-o", "name", "web"); code != exitOK || out != "pod/web-"+testNode+"\n" {
		t.Errorf("get -o name web: exit %d %q", code, out)
	}
	if code, _, _ := s.run("get", "-o", "bogus"); code != exitUsage {
		t.Errorf("get -o bogus: exit %d, want %d", code, exitUsage)
	}
	if code, out, _ := s.run("rm", "web"); code != exitOK || !strings.Contains(out, "removed") {
		t.Errorf("rm: exit %d %q", code, out)
	}
	if got := s.files(); !slices.Equal(got, []string{"broken.yaml"}) {
		t.Errorf("after rm: %v", got)
	}
	if code, _, errOut := s.run("rm", "web"); code != exitFailure || !strings.Contains(errOut, "no manifest") {
		t.Errorf("rm of a pod that is not there: exit %d %q", code, errOut)
	}
}

func TestDiffSaysWhatChanges(t *testing.T) {
	s := newSetup(t)
	s.run("apply", s.write("web.yaml", pod("web", "img:1")))
	code, out, _ := s.run("diff", s.write("web2.yaml", pod("web", "img:2")))
	if code != exitFailure || !strings.Contains(out, `~ spec.containers[0].image: "img:1" -> "img:2"`) || !strings.Contains(out, "new pod generation") {
		t.Errorf("diff of an edit: exit %d\n%s", code, out)
	}
	code, out, _ = s.run("diff", s.write("web3.yaml", pod("web", "img:1")))
	if code != exitOK || !strings.Contains(out, "no change") {
		t.Errorf("diff of the same pod: exit %d\n%s", code, out)
	}
	code, out, _ = s.run("diff", s.write("other.yaml", pod("other", "img:1")))
	if code != exitFailure || !strings.Contains(out, "new pod") {
		t.Errorf("diff of a new pod: exit %d\n%s", code, out)
	}
	// An error is not a difference: above 1, as kubectl diff's.
	code, _, errOut := s.run("diff", s.write("broken.yaml", "kind: Pod\nspec: [\n"))
	if code != exitDiffError || !strings.Contains(errOut, "error: ") {
		t.Errorf("diff of a broken file: exit %d %q, want %d and the error", code, errOut, exitDiffError)
	}
	if code, _, _ := s.run("diff", "/nonexistent/pod.yaml"); code != exitDiffError {
		t.Errorf("diff of a missing file: exit %d, want %d", code, exitDiffError)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	s := newSetup(t)
	if code, out, _ := s.run("--version"); code != exitOK || !strings.HasPrefix(out, "manifestctl version ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if code, out, _ := s.run("completion", sh); code != exitOK || !strings.Contains(out, "manifestctl") {
			t.Errorf("completion %s: exit %d", sh, code)
		}
	}
	if code, _, _ := s.run("--no-such-flag"); code != exitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, exitUsage)
	}
}

func TestApplyOverAFIFODoesNotHang(t *testing.T) {
	s := newSetup(t)
	if err := syscall.Mkfifo(filepath.Join(s.manifests, "web.yaml"), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan int)
	go func() {
		code, _, _ := s.run("apply", s.write("web.yaml", pod("web", "img:1")))
		done <- code
	}()
	select {
	case code := <-done:
		if code != exitFailure {
			t.Errorf("apply over a FIFO: exit %d, want %d", code, exitFailure)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apply over a FIFO hangs")
	}
}

func TestVIsVerbosityAsKubectls(t *testing.T) {
	s := newSetup(t)
	code, out, errOut := s.run("-v", "6", "get")
	if code != exitOK || !strings.Contains(errOut, `"Settings"`) || !strings.Contains(errOut, "Calling the agent's local API") || strings.Contains(out, "Settings") {
		t.Errorf("-v 6 get: exit %d, stdout %q, stderr %q; want the log on stderr", code, out, errOut)
	}
	if code, _, errOut := s.run("--v=4", "get"); code != exitOK || !strings.Contains(errOut, `"Settings"`) || strings.Contains(errOut, "Calling the agent") {
		t.Errorf("--v=4 get: exit %d, stderr %q; want the settings and not the calls", code, errOut)
	}
	// Verbosity is not kept from one run to the next.
	if _, _, errOut := s.run("get"); strings.Contains(errOut, "Settings") {
		t.Errorf("get after -v 6: stderr %q", errOut)
	}
	if code, out, _ := s.run("version"); code != exitOK || !strings.HasPrefix(out, "manifestctl version ") {
		t.Errorf("version: exit %d %q", code, out)
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	s := newSetup(t)
	for _, args := range [][]string{{"nosuchcommand"}, {"-v"}, {"get", "a", "b"}, {"describe"}, {"logs", "--tail", "x", "web"}, {"version", "x"}, {"get", "--no-such-flag"}} {
		if code, _, errOut := s.run(args...); code != exitUsage || !strings.HasPrefix(errOut, "error: ") {
			t.Errorf("%v: exit %d, stderr %q; want %d and the error", args, code, errOut, exitUsage)
		}
	}
	if code, out, _ := s.run(); code != exitOK || !strings.Contains(out, "Available Commands") {
		t.Errorf("no command: exit %d; want the help", code)
	}
}

func TestValidateMessagesNameTheFix(t *testing.T) {
	s := newSetup(t)
	utf16 := []byte{}
	for _, r := range pod("web", "img:1") {
		utf16 = append(utf16, byte(r), 0) // UTF-16LE, no byte-order mark
	}
	tests := map[string]struct{ body, want string }{
		"utf16.yaml":    {string(utf16), "is UTF-16 without a byte-order mark (every other byte is zero), not UTF-8"},
		"quantity.yaml": {strings.Replace(pod("web", "img:1"), "}]", ", resources: {limits: {memory: 12MBs}}}]", 1), `spec.containers[0].resources.limits.memory: Invalid value: "12MBs"`},
		"misspelt.yaml": {strings.Replace(pod("web", "img:1"), "}]", ", imagePullPolicyy: Always}]", 1), `spec.containers[0].imagePullPolicyy: Forbidden: unknown field; did you mean "imagePullPolicy"?`},
	}
	for name, tt := range tests {
		path := s.write(name, tt.body)
		if code, _, errOut := s.run("validate", path); code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("validate %s: exit %d, stderr %q; want %q", name, code, errOut, tt.want)
		}
	}
}
