package app

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

func TestDescribeShowsWhatTheAgentKnowsOfTheProcess(t *testing.T) {
	var out strings.Builder
	printDetail(&out, localapi.PodDetail{Pod: localapi.Pod{Name: "web", Containers: []localapi.Container{
		{Name: "a", State: localapi.StateRunning, Process: localapi.ProcessWatched},
		{Name: "b", State: localapi.StateRunning},
	}}})
	if !regexp.MustCompile(`(?s)  a:\n.*Process: +watched\n.*  b:\n`).MatchString(out.String()) || strings.Count(out.String(), "Process:") != 1 {
		t.Errorf("describe printed:\n%s\nwant Process: watched for a only", out.String())
	}
}
