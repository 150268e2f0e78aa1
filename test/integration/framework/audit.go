package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// AuditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1,
// Metadata level) the tests read.
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Resource is "resource" or "resource/subresource", or for a request that
// names no resource (/healthz, discovery) its path.
func (ev *AuditEvent) Resource() string {
	if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		path, _, _ := strings.Cut(ev.RequestURI, "?")
		return path
	}
	if ev.ObjectRef.Subresource != "" {
		return ev.ObjectRef.Resource + "/" + ev.ObjectRef.Subresource
	}
	return ev.ObjectRef.Resource
}

// Code is the response code, 0 if the event records none (a request still
// running when the log was read).
func (ev *AuditEvent) Code() int {
	if ev.ResponseStatus == nil {
		return 0
	}
	return ev.ResponseStatus.Code
}

// maxAuditLine bounds one event; a Metadata-level event is about 1 KiB.
const maxAuditLine = 1 << 20

// readAuditLog returns the requests recorded in the audit log at path and in
// the apiserver's rotated copies beside it, oldest first, one event per
// request: its last stage (ResponseComplete, or ResponseStarted for a watch
// still open).
func readAuditLog(path string) ([]AuditEvent, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	ext := filepath.Ext(base)
	// Rotated copies are named <name>-<timestamp><ext>, which sort by age and
	// before the current file.
	rotated, err := filepath.Glob(filepath.Join(dir, strings.TrimSuffix(base, ext)+"-*"+ext))
	if err != nil {
		return nil, err
	}
	sort.Strings(rotated)
	var events []AuditEvent
	index := map[string]int{}
	for _, f := range append(rotated, path) {
		if err := readAuditFile(f, func(ev AuditEvent) {
			if i, ok := index[ev.AuditID]; ok && ev.AuditID != "" {
				events[i] = ev
				return
			}
			index[ev.AuditID] = len(events)
			events = append(events, ev)
		}); err != nil {
			return nil, err
		}
	}
	return events, nil
}

func readAuditFile(path string, add func(AuditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return parseAuditLog(f, path, add)
}

// parseAuditLog decodes one JSON event a line. A last line cut short (the
// apiserver still writing it) is not an error; any other bad line is.
func parseAuditLog(r io.Reader, name string, add func(AuditEvent)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxAuditLine)
	var pending error
	for n := 1; sc.Scan(); n++ {
		if pending != nil {
			return pending
		}
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var ev AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			pending = fmt.Errorf("%s:%d: not an audit event: %w", name, n, err)
			continue
		}
		add(ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// RequestKey is one kind of request, as the audit log records it.
type RequestKey struct {
	User     string
	Verb     string
	Resource string // as AuditEvent.Resource
	Code     int
}

// CountRequests counts the requests received in [from, to) by user, verb,
// resource and response code.
func CountRequests(events []AuditEvent, from, to time.Time) map[RequestKey]int {
	counts := map[RequestKey]int{}
	for i := range events {
		ev := &events[i]
		if ev.RequestReceived.Before(from) || !ev.RequestReceived.Before(to) {
			continue
		}
		counts[RequestKey{User: ev.User.Username, Verb: ev.Verb, Resource: ev.Resource(), Code: ev.Code()}]++
	}
	return counts
}

// AuditEvents reads every request the apiserver has recorded so far.
func (e *Env) AuditEvents() ([]AuditEvent, error) {
	return readAuditLog(e.auditLog)
}

// expectForbiddenAgent marks, in the audit log's user agent, requests a test
// makes knowing they will be refused.
const expectForbiddenAgent = "nodeagent-integration-expects-forbidden"

// ExpectForbidden returns a copy of cfg whose requests are left out of the
// run's check for 403s to nodes: for a test that proves an identity is
// refused something.
func ExpectForbidden(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = strings.TrimSpace(c.UserAgent + " " + expectForbiddenAgent)
	return c
}

// nodeIdentity reports whether user is a node's or a bootstrapping node's
// identity.
func nodeIdentity(user string) bool {
	return strings.HasPrefix(user, "system:node:") || strings.HasPrefix(user, "system:bootstrap:")
}

// forbiddenToNodes returns an error listing each request by a node identity
// that was refused with 403 (not made through ExpectForbidden): a node agent
// that asks for what its identity may not have is a bug.
func forbiddenToNodes(events []AuditEvent) error {
	var lines []string
	for i := range events {
		ev := &events[i]
		if ev.Code() != 403 || !nodeIdentity(ev.User.Username) || strings.Contains(ev.UserAgent, expectForbiddenAgent) {
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s %s %s %s -> 403 (%s)",
			ev.RequestReceived.UTC().Format(time.RFC3339Nano), ev.User.Username, ev.Verb, ev.RequestURI, ev.UserAgent))
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%d requests by node identities were refused (403):\n%s", len(lines), strings.Join(lines, "\n"))
}
