package app

import (
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

func TestEscapeTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tabs\tand\nnewlines": "plain text, tabs\tand\nnewlines",
		"\x1b[2J\x1b]0;owned\x07":         "^[[2J^[]0;owned^G",
		"line\roverwritten":               `line\roverwritten`,
		"del\x7f":                         "del^?",
		"ünïcödé ✓":                       "ünïcödé ✓",
	} {
		if got := escapeTerminal(in); got != want {
			t.Errorf("escapeTerminal(%q) = %q, want %q", in, got, want)
		}
	}
}

// describe prints what containers said escaped: a termination message or
// a timeline entry cannot drive the operator's terminal.
func TestDescribeEscapesContainerText(t *testing.T) {
	var out strings.Builder
	code := int32(1)
	printDetail(&out, localapi.PodDetail{
		Pod: localapi.Pod{Name: "web", Containers: []localapi.Container{{
			Name: "main", State: "terminated", Reason: "Error", Message: "\x1b]0;owned\x07bye\r", ExitCode: &code,
		}}},
		Timeline: []localapi.TimelineEntry{{Kind: "probe", Message: "output \x1b[31mred"}},
	})
	if strings.ContainsAny(out.String(), "\x1b\x07\r") || !strings.Contains(out.String(), `^[]0;owned^Gbye\r`) || !strings.Contains(out.String(), "^[[31mred") {
		t.Errorf("describe printed %q", out.String())
	}
}
