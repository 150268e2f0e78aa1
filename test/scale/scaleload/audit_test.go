package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCountRequestsOncePerRequestInTheWindowByClient(t *testing.T) {
	log := strings.Join([]string{
		// Before the window.
		`{"auditID":"0","stage":"ResponseComplete","verb":"get","userAgent":"nodeagent/v1","requestReceivedTimestamp":"2026-01-01T00:00:00.5Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"nodes"}}`,
		// A watch: two events, one request.
		`{"auditID":"1","stage":"ResponseStarted","verb":"watch","userAgent":"nodeagent/v1 (linux)","requestReceivedTimestamp":"2026-01-01T00:00:01Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods"}}`,
		`{"auditID":"1","stage":"ResponseComplete","verb":"watch","userAgent":"nodeagent/v1 (linux)","requestReceivedTimestamp":"2026-01-01T00:00:01Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods"}}`,
		`{"auditID":"2","stage":"ResponseComplete","verb":"patch","userAgent":"nodeagent/v1","requestReceivedTimestamp":"2026-01-01T00:00:02Z","user":{"username":"system:node:n2"},"objectRef":{"resource":"pods","subresource":"status"}}`,
		`not json`,
		`{"auditID":"3","stage":"ResponseComplete","verb":"get","userAgent":"kube-scheduler/v1.37.2","requestReceivedTimestamp":"2026-01-01T00:00:03Z","user":{"username":"system:kube-scheduler"}}`,
		// At the end of the window: outside it.
		`{"auditID":"4","stage":"ResponseComplete","verb":"get","userAgent":"nodeagent/v1","requestReceivedTimestamp":"2026-01-01T00:00:10Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"nodes"}}`,
		`{"auditID":"5","stage":"ResponseComplete","verb":"get","userAgent":"x","requestReceivedTimestamp":"2026-01-01T00:00:04Z","user":{"username":"admin"},"objectRef":{"resource":"` + strings.Repeat("x", maxAuditLine) + `"}}`,
	}, "\n")
	from := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	got, err := countRequestsIn(strings.NewReader(log), from, from.Add(9*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := requestCounts{
		ByKey: map[requestKey]int{
			{Client: "nodes", Agent: "nodeagent", Verb: "watch", Resource: "pods"}:                 1,
			{Client: "nodes", Agent: "nodeagent", Verb: "patch", Resource: "pods/status"}:          1,
			{Client: "system:kube-scheduler", Agent: "kube-scheduler", Verb: "get", Resource: "-"}: 1,
		},
		Skipped: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}
