package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// terminal is a shell in a tmux session of 1000x50 characters, on a tmux
// server of its own: the test types into it (send-keys) and reads the
// screen and its scrollback (capture-pane), as an operator would see them.
// The width keeps every command line of the tour on one line: a line that
// fills the width exactly is marked wrapped, and capture-pane -J then joins
// the command's first line of output to it (seen once at 200 columns, with
// a temporary directory's name of the length that made it so).
type terminal struct {
	server string // tmux -L: the server's socket name
	steps  int
}

// bashCompletion is bash-completion's library, which cobra's bash script
// needs, as an operator's shell loads it from /etc/bash.bashrc.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// tmuxPath finds tmux, which hack/containerd-up.sh installs with
// bash-completion and the other packages the tests need; without them the
// tour cannot run, and says so rather than skipping.
func tmuxPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is not installed (%v): hack/containerd-up.sh installs it with apt-get; install it (apt-get install tmux) and run again", err)
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatalf("bash-completion is not installed (%v): hack/containerd-up.sh installs it with apt-get; install it (apt-get install bash-completion) and run again", err)
	}
	return p
}

func newTerminal(t *testing.T, path string) *terminal {
	t.Helper()
	term := &terminal{server: fmt.Sprintf("nodeagent-tour-%d", os.Getpid())}
	cmd := exec.Command(tmuxPath(t), "-L", term.server, "-f", "/dev/null",
		"new-session", "-d", "-x", "1000", "-y", "50", "-s", "tour", "bash --norc --noprofile")
	cmd.Env = []string{"PATH=" + path, "HOME=" + t.TempDir(), "TERM=xterm-256color", "LANG=C.UTF-8"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// The transcript of the tour, for the reader of the test's log.
		t.Logf("the terminal at the end:\n%s", term.screen(t))
		_ = exec.Command("tmux", "-L", term.server, "kill-server").Run()
	})
	// The shell is up once it shows its prompt.
	term.waitFor(t, regexp.MustCompile(`\S`), 10*time.Second)
	return term
}

func (term *terminal) tmux(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", term.server}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types text, literally, without pressing Enter.
func (term *terminal) keys(t *testing.T, text string) {
	term.tmux(t, "send-keys", "-t", "tour", "-l", text)
}

// press presses a key by its tmux name: Enter, Tab.
func (term *terminal) press(t *testing.T, key string) { term.tmux(t, "send-keys", "-t", "tour", key) }

// screen is the pane with its whole scrollback, wrapped lines joined.
func (term *terminal) screen(t *testing.T) string {
	return term.tmux(t, "capture-pane", "-p", "-J", "-S", "-", "-t", "tour")
}

// waitFor waits until the screen shows what matches re, and returns the
// screen.
func (term *terminal) waitFor(t *testing.T, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	var s string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if s = term.screen(t); re.MatchString(s) {
			return s
		}
	}
	t.Fatalf("the terminal does not show %s after %v:\n%s", re, timeout, s)
	return ""
}

// run types a command line (or finishes one already typed), presses Enter
// and waits for it to end; it returns its exit code and what the screen
// shows from the line typed on.
func (term *terminal) run(t *testing.T, line string, timeout time.Duration) (int, string) {
	t.Helper()
	term.steps++
	marker := fmt.Sprintf(`; echo "exit=$? step%d"`, term.steps)
	term.keys(t, line+marker)
	term.press(t, "Enter")
	done := regexp.MustCompile(fmt.Sprintf(`exit=(\d+) step%d\b`, term.steps))
	s := term.waitFor(t, done, timeout)
	from := strings.LastIndex(s, marker)
	typed := strings.LastIndex(s[:from], "\n") + 1 // the line typed, prompt included
	m := done.FindStringSubmatchIndex(s[from:])
	var code int
	fmt.Sscan(s[from+m[2]:from+m[3]], &code)
	return code, s[typed : from+m[1]]
}

func shows(t *testing.T, what, screen string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(screen, s) {
			t.Errorf("%s: the terminal does not show %q:\n%s", what, s, screen)
		}
	}
}

// TestBinaryManifestctlTour drives the built manifestctl in a real terminal
// (tmux), against the built nodeagent on the real containerd, as an
// operator: validate (with a misspelt field), diff, apply --wait with its
// progress, get, describe of a pod name completed with TAB, logs, an edit,
// rollback. It asserts on what the terminal shows.
func TestBinaryManifestctlTour(t *testing.T) {
	h := newAgent(t)
	m := newMctl(t, h)
	bin := manifestctlBinary(t)
	term := newTerminal(t, filepath.Dir(bin)+":/usr/bin:/bin")
	mc := "manifestctl --config " + m.config
	const slow = 90 * time.Second

	// The pod initialises for two seconds: apply --wait shows its progress.
	web := testPod("web", shContainer("c", `i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.2; done`))
	web.Spec.InitContainers = []corev1.Container{shContainer("init", "sleep 2")}
	webFile := m.writeFile("web.yaml", web)
	misspelt := web.DeepCopy()
	misspelt.Spec.Containers[0].ImagePullPolicy = ""
	misspeltFile := m.writeFile("misspelt.yaml", misspelt)
	body, err := os.ReadFile(misspeltFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(misspeltFile, []byte(strings.Replace(string(body), "    name: c\n", "    name: c\n    imagePullPolicyy: Never\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	name := h.podName("web")

	if code, s := term.run(t, "source "+bashCompletion+"; source <(manifestctl completion bash)", 10*time.Second); code != 0 {
		t.Fatalf("sourcing the bash completion: exit %d\n%s", code, s)
	}

	t.Run("validate", func(t *testing.T) {
		code, s := term.run(t, mc+" validate "+webFile+" "+misspeltFile, slow)
		shows(t, "validate", s, webFile+": valid (1 pod: ["+name+"_default])",
			misspeltFile+`: spec.containers[0].imagePullPolicyy: Forbidden: unknown field; did you mean "imagePullPolicy"?`,
			"1 manifest would be refused", "exit=1")
		if code != 1 {
			t.Errorf("validate: exit %d, want 1", code)
		}
	})

	t.Run("diff", func(t *testing.T) {
		code, s := term.run(t, mc+" diff -f - < "+webFile, slow)
		shows(t, "diff", s, "pod "+name, "new pod: the agent will start it")
		if code != 1 {
			t.Errorf("diff of a new pod: exit %d, want 1 (there are differences)", code)
		}
	})

	t.Run("apply --wait shows its progress", func(t *testing.T) {
		code, s := term.run(t, mc+" apply --wait --timeout 60s -f "+webFile, slow)
		shows(t, "apply --wait", s, filepath.Join(h.manifests, "web.yaml")+" created",
			"Waiting for the new pod generation to run (", "pod/"+name+": ", "pod/"+name+" running (uid ")
		if code != 0 {
			t.Fatalf("apply --wait: exit %d", code)
		}
	})

	t.Run("get", func(t *testing.T) {
		code, s := term.run(t, mc+" get", slow)
		if code != 0 || !regexp.MustCompile(`(?m)^`+name+` +1/1 +Running +0 +`).MatchString(s) {
			t.Errorf("get: exit %d, want the pod 1/1 Running:\n%s", code, s)
		}
		code, s = term.run(t, mc+" get -o 'custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image' --no-headers", slow)
		if code != 0 || !regexp.MustCompile(`(?m)^`+name+` +`+regexp.QuoteMeta(web.Spec.Containers[0].Image)+`\s*$`).MatchString(s) {
			t.Errorf("get -o custom-columns: exit %d:\n%s", code, s)
		}
	})

	t.Run("describe of a name completed with TAB", func(t *testing.T) {
		term.keys(t, mc+" describe ")
		term.press(t, "Tab")
		// The only pod's name, completed from the agent, and a space.
		term.waitFor(t, regexp.MustCompile(regexp.QuoteMeta("describe "+name+" ")), 30*time.Second)
		code, s := term.run(t, "", slow)
		shows(t, "describe", s, "Name:", name, "Manifest:", filepath.Join(h.manifests, "web.yaml"), "Status:", "Running", "Init containers:", "Timeline:")
		if code != 0 {
			t.Errorf("describe: exit %d", code)
		}
	})

	t.Run("logs", func(t *testing.T) {
		code, s := term.run(t, mc+" logs "+name+" --tail 2", slow)
		if code != 0 || !regexp.MustCompile(`(?m)^line \d+\s*$`).MatchString(s) {
			t.Errorf("logs: exit %d, want 'line N' lines:\n%s", code, s)
		}
	})

	t.Run("an edit, then rollback", func(t *testing.T) {
		edited := web.DeepCopy()
		edited.Spec.InitContainers = nil
		edited.Spec.Containers[0].Env = []corev1.EnvVar{envVar("GENERATION", "2")}
		code, s := term.run(t, mc+" apply --wait --timeout 60s "+m.writeFile("web-v2.yaml", edited), slow)
		shows(t, "apply of the edit", s, filepath.Join(h.manifests, "web.yaml")+" configured", "pod/"+name+" running")
		if code != 0 {
			t.Fatalf("apply of the edit: exit %d", code)
		}
		code, s = term.run(t, mc+" rollback --wait --timeout 60s "+name, slow)
		shows(t, "rollback", s, "pod/"+name+" running")
		if code != 0 {
			t.Fatalf("rollback: exit %d", code)
		}
		code, s = term.run(t, mc+" diff "+webFile, slow)
		shows(t, "diff after rollback", s, "no change")
		if code != 0 {
			t.Errorf("diff of the version rolled back to: exit %d, want 0", code)
		}
	})
}
