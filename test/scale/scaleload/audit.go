package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// maxAuditLine bounds one audit event (at Metadata level, a few KB); a
// longer line is counted as skipped.
const maxAuditLine = 1 << 20

// auditEvent is what a count needs of one line of the audit log.
type auditEvent struct {
	AuditID   string    `json:"auditID"`
	Stage     string    `json:"stage"`
	Verb      string    `json:"verb"`
	UserAgent string    `json:"userAgent"`
	Received  time.Time `json:"requestReceivedTimestamp"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// requestKey is one row of the request tables.
type requestKey struct {
	Client   string // "nodes", or the user name
	Agent    string // the user agent's program, before its first '/'
	Verb     string
	Resource string // resource[/subresource], or the non-resource path's absence: "-"
}

// requestCounts are the requests received in a window, each counted once.
type requestCounts struct {
	ByKey   map[requestKey]int
	Skipped int // lines too long or not JSON
}

// countRequests counts the requests of the audit log at path received in
// [from, to). A request is counted once, at its first event (a watch has
// two, when its response starts and when it ends). Users named
// system:node:<name> are the client "nodes".
func countRequests(path string, from, to time.Time) (requestCounts, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator names the audit log
	if err != nil {
		return requestCounts{}, fmt.Errorf("--audit-log: %w", err)
	}
	defer f.Close()
	return countRequestsIn(f, from, to)
}

func countRequestsIn(r io.Reader, from, to time.Time) (requestCounts, error) {
	out := requestCounts{ByKey: map[requestKey]int{}}
	counted := map[string]bool{}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if errors.Is(err, errLineTooLong) {
			out.Skipped++
			continue
		}
		if err != nil {
			return out, fmt.Errorf("--audit-log: %w", err)
		}
		var ev auditEvent
		if json.Unmarshal(line, &ev) != nil {
			out.Skipped++
			continue
		}
		if ev.Received.Before(from) || !ev.Received.Before(to) || counted[ev.AuditID] {
			continue
		}
		counted[ev.AuditID] = true
		out.ByKey[keyOf(&ev)]++
	}
}

func keyOf(ev *auditEvent) requestKey {
	k := requestKey{Client: ev.User.Username, Verb: ev.Verb, Resource: "-"}
	if strings.HasPrefix(k.Client, "system:node:") {
		k.Client = "nodes"
	}
	k.Agent, _, _ = strings.Cut(ev.UserAgent, "/")
	if ev.ObjectRef != nil {
		k.Resource = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			k.Resource += "/" + ev.ObjectRef.Subresource
		}
	}
	return k
}

var errLineTooLong = errors.New("line longer than the bound")

// readLine reads one line of at most maxAuditLine bytes; a longer one is
// consumed whole and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		if len(line)+len(part) <= maxAuditLine {
			line = append(line, part...)
		} else {
			line = line[:0:0]
			for isPrefix {
				if _, isPrefix, err = br.ReadLine(); err != nil {
					return nil, err
				}
			}
			return nil, errLineTooLong
		}
		if !isPrefix {
			return line, nil
		}
	}
}
