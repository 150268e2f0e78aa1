package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// complete runs what the shell completion scripts run at a TAB, and
// returns the candidates and the directive.
func complete(s *testSetup, args ...string) ([]string, string) {
	s.t.Helper()
	code, out, errOut := s.run(append([]string{cobra.ShellCompNoDescRequestCmd}, args...)...)
	if code != exitOK {
		s.t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestCompletionOfPodNamesAsksTheAgent(t *testing.T) {
	s := newSetup(t)
	agent := agentWithTwoPods(t, s)
	// db runs only in the agent (from an HTTP source): its name comes from it.
	for _, cmd := range []string{"describe", "logs", "get", "rm", "rollback"} {
		got, directive := complete(s, append(agent, cmd, "")...)
		if strings.Join(got, " ") != "db-node1 web-node1" || directive != ":4" {
			t.Errorf("%s <TAB>: %q %s; want both pods and no file completion (:4)", cmd, got, directive)
		}
	}
	if got, _ := complete(s, append(agent, "describe", "w")...); strings.Join(got, " ") != "web-node1" {
		t.Errorf("describe w<TAB>: %q", got)
	}
	if got, _ := complete(s, append(agent, "describe", "web-node1", "")...); len(got) != 0 {
		t.Errorf("describe web-node1 <TAB>: %q; want nothing, it takes one name", got)
	}
}

func TestCompletionOfPodNamesWithoutTheAgentReadsTheDirectory(t *testing.T) {
	s := newSetup(t)
	if err := os.WriteFile(filepath.Join(s.manifests, "web.yaml"), []byte(pod("web", "i")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, directive := complete(s, "describe", ""); strings.Join(got, " ") != "web-node1" || directive != ":4" {
		t.Errorf("describe <TAB> with no agent: %q %s", got, directive)
	}
}

func TestCompletionOfManifestFiles(t *testing.T) {
	s := newSetup(t)
	for _, args := range [][]string{{"apply", ""}, {"diff", ""}, {"validate", ""}, {"apply", "-f", ""}} {
		got, directive := complete(s, args...)
		if strings.Join(got, " ") != "yaml yml json" || directive != ":8" {
			t.Errorf("%v<TAB>: %q %s; want the manifest extensions to filter files by (:8)", args, got, directive)
		}
	}
}

func TestCompletionOfTheSettingsFlags(t *testing.T) {
	s := newSetup(t)
	if got, directive := complete(s, "get", "--config", ""); strings.Join(got, " ") != "yaml yml" || directive != ":8" {
		t.Errorf("--config <TAB>: %q %s; want yaml files", got, directive)
	}
	if _, directive := complete(s, "get", "--manifest-dir", ""); directive != ":16" {
		t.Errorf("--manifest-dir <TAB>: %s; want directories (:16)", directive)
	}
	if got, _ := complete(s, "get", "-o", "json"); strings.Join(got, " ") != "json jsonpath= jsonpath-file= jsonpath-as-json=" {
		t.Errorf("-o json<TAB>: %q", got)
	}
}
