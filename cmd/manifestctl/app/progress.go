package app

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// progressAfter is how long --wait waits quietly: a pod that runs within
// it needs no progress lines.
const progressAfter = time.Second

// progress tells, on stderr, what --wait waits for and the state the agent
// reports, as kubectl rollout status does: once the wait has lasted
// progressAfter, and then each time the state changes. stdout keeps only
// the outcome.
type progress struct {
	w     io.Writer
	start time.Time
	last  string
}

// report prints the state of the pods still pending, if it is time and it
// changed. seen are the agent's pods by UID.
func (p *progress) report(now time.Time, pending map[types.UID]*corev1.Pod, seen map[types.UID]localapi.Pod) {
	if now.Sub(p.start) < progressAfter {
		return
	}
	var parts []string
	for uid, want := range pending {
		state := "not seen by the agent yet"
		if got, ok := seen[uid]; ok {
			state = fmt.Sprintf("%s, %s containers ready", escapeTerminal(join(statusOf(got), got.Message)), ready(got))
		}
		parts = append(parts, fmt.Sprintf("pod/%s: %s", want.Name, state))
	}
	slices.Sort(parts)
	line := strings.Join(parts, "; ")
	if line == p.last {
		return
	}
	p.last = line
	fmt.Fprintf(p.w, "Waiting for the new pod generation to run (%s so far): %s\n", now.Sub(p.start).Round(time.Second), line)
}
