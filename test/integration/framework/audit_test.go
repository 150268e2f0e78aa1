package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// testdata/audit.log holds events a v1.37 kube-apiserver wrote with the
// policy controlplane-up.sh sets: a node's GET of another node's Lease
// refused (403), its PATCH of its unregistered Node's status (404), an
// admin's LIST, and a node's watch, started and then completed.
const recordedLog = "testdata/audit.log"

func mustRead(t *testing.T, path string) []AuditEvent {
	t.Helper()
	events, err := readAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestCountRequestsFromRecordedLog(t *testing.T) {
	events := mustRead(t, recordedLog)
	if len(events) != 4 {
		t.Fatalf("read %d requests, want 4 (the watch's two stages are one request)", len(events))
	}
	node := "system:node:nodeagent-test-node"
	from := time.Date(2026, 11, 25, 21, 36, 0, 0, time.UTC)
	got := CountRequests(events, from, from.Add(time.Minute))
	want := map[RequestKey]int{
		{User: node, Verb: "get", Resource: "leases", Code: 403}:         1,
		{User: node, Verb: "patch", Resource: "nodes/status", Code: 404}: 1,
		{User: "admin", Verb: "list", Resource: "pods", Code: 200}:       1,
		{User: node, Verb: "watch", Resource: "pods", Code: 200}:         1,
	}
	if len(got) != len(want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("count of %+v = %d, want %d (all: %v)", k, got[k], n, got)
		}
	}

	// The window is by the time a request was received, end excluded: the
	// watch came at 21:36:12.785425.
	watchAt := time.Date(2026, 11, 25, 21, 36, 12, 785425000, time.UTC)
	if n := len(CountRequests(events, watchAt, from.Add(time.Minute))); n != 1 {
		t.Errorf("from the watch on: %d kinds of request, want 1", n)
	}
	if n := len(CountRequests(events, from, watchAt)); n != 3 {
		t.Errorf("up to the watch: %d kinds of request, want 3", n)
	}
}

func TestForbiddenToNodesListsNodeRequests(t *testing.T) {
	events := mustRead(t, recordedLog)
	err := forbiddenToNodes(events)
	if err == nil {
		t.Fatal("a node's 403 in the log passed the check")
	}
	if msg := err.Error(); !strings.Contains(msg, "system:node:nodeagent-test-node get /api/v1/namespaces/kube-node-lease/leases/other-node -> 403") ||
		strings.Count(msg, "-> 403") != 1 {
		t.Errorf("error = %q, want the one refused request named by user, verb and URI", msg)
	}

	// The same request from a client a test made with ExpectForbidden.
	events[0].UserAgent = ExpectForbidden(&rest.Config{UserAgent: "nodeagent/test"}).UserAgent
	if err := forbiddenToNodes(events); err != nil {
		t.Errorf("a 403 the test expected failed the check: %v", err)
	}

	// A bootstrap token's 403 counts; an admin's does not.
	events[0].UserAgent = "nodeagent"
	events[0].User.Username = "system:bootstrap:abcdef"
	if err := forbiddenToNodes(events); err == nil {
		t.Error("a bootstrap token's 403 passed the check")
	}
	events[0].User.Username = "admin"
	if err := forbiddenToNodes(events); err != nil {
		t.Errorf("an admin's 403 failed the check: %v", err)
	}
}

func TestReadAuditLogFollowsRotation(t *testing.T) {
	data, err := os.ReadFile(recordedLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	dir := t.TempDir()
	// The apiserver's rotation names copies audit-<time>.log; the watch's
	// two stages end up in different files.
	write := func(name string, lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("audit-2026-11-25T21-36-00.000.log", lines[0], lines[1])
	write("audit-2026-11-25T21-36-10.000.log", lines[2], lines[3])
	write("audit.log", lines[4])
	events := mustRead(t, filepath.Join(dir, "audit.log"))
	var got []string
	for _, ev := range events {
		got = append(got, ev.Verb+":"+ev.Stage)
	}
	if want := "get:ResponseComplete patch:ResponseComplete list:ResponseComplete watch:ResponseComplete"; strings.Join(got, " ") != want {
		t.Errorf("requests = %v, want %s", got, want)
	}
}

func TestReadAuditLogRejectsGarbage(t *testing.T) {
	data, err := os.ReadFile(recordedLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	path := filepath.Join(t.TempDir(), "audit.log")

	// A last line cut short is the apiserver still writing: not an error.
	if err := os.WriteFile(path, []byte(lines[0]+lines[1][:100]), 0o600); err != nil {
		t.Fatal(err)
	}
	if events := mustRead(t, path); len(events) != 1 {
		t.Errorf("with a torn last line: %d requests, want 1", len(events))
	}

	if err := os.WriteFile(path, []byte(lines[0]+"not json\n"+lines[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readAuditLog(path); err == nil || !strings.Contains(err.Error(), "audit.log:2:") {
		t.Errorf("a bad line inside the log: error %v, want one naming line 2", err)
	}
}
