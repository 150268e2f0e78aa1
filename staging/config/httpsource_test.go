package config

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// fakeServer serves whatever body and status the test sets.
type fakeServer struct {
	mu      sync.Mutex
	status  int
	body    string
	delay   time.Duration
	headers []http.Header
}

func (f *fakeServer) set(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body = status, body
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	status, body, delay := f.status, f.body, f.delay
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// runHTTPSource polls srv under a fake clock: the first poll happens at
// once, each further one when the test calls poll.
func runHTTPSource(t *testing.T, srv *fakeServer, opts HTTPOptions) (s *HTTPSource, m *Merger, poll func()) {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	clk := clocktesting.NewFakeClock(time.Now())
	m = NewMerger(MergerOptions{Buffer: 100})
	opts.URL, opts.NodeName, opts.Sink, opts.Clock = ts.URL+"/pods", testNode, m, clk
	s, err := NewHTTPSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	poll = func() {
		t.Helper()
		eventually(t, "the poll timer", clk.HasWaiters)
		clk.Step(20 * time.Second)
		// Wait until the poll is done: the next timer is armed again.
		eventually(t, "the poll to finish", clk.HasWaiters)
	}
	return s, m, poll
}

const httpPodList = `{"apiVersion":"v1","kind":"PodList","items":[
 {"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i:1"}]}},
 {"metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}]}`

func TestHTTPSourceKeepsTheLastGoodPods(t *testing.T) {
	srv := &fakeServer{status: http.StatusOK, body: podManifest("web", "i:1")}
	s, m, poll := runHTTPSource(t, srv, HTTPOptions{Header: http.Header{"Authorization": {"Bearer t0k"}}})
	expect(t, m, "ADD http [http:web-node1]")

	srv.set(http.StatusOK, httpPodList)
	poll()
	expect(t, m, "REMOVE http [http:web-node1]")
	expect(t, m, "ADD http [http:a-node1 http:b-node1]")

	steps := []struct {
		name   string
		status int
		body   string
		is     error
		detail string
	}{
		{"server error", http.StatusInternalServerError, "oops", manifest.ErrFetch, "HTTP status 500"},
		{"not found", http.StatusNotFound, "", manifest.ErrFetch, "HTTP status 404"},
		{"empty body", http.StatusOK, "", manifest.ErrEmpty, "serve an empty PodList"},
		{"malformed", http.StatusOK, "{not json", manifest.ErrSyntax, "invalid character"},
		{"one invalid pod in the list", http.StatusOK, strings.Replace(httpPodList, `"image":"i:1"}]}}]`, `"image":""}]}}]`, 1), manifest.ErrInvalid, "items[1].spec.containers[0].image"},
		{"wrong kind", http.StatusOK, `{"apiVersion":"v1","kind":"Service"}`, manifest.ErrKind, `"Service"`},
	}
	for _, st := range steps {
		srv.set(st.status, st.body)
		poll()
		err := s.Err()
		if !errors.Is(err, st.is) || !strings.Contains(err.Error(), st.detail) || !strings.HasPrefix(err.Error(), s.opts.URL+": ") {
			t.Errorf("%s: Err() = %v, want %v naming the URL and containing %q", st.name, err, st.is, st.detail)
		}
		if out := drain(m.Updates()); len(out) != 0 {
			t.Errorf("%s changed pods: %v", st.name, out)
		}
	}

	srv.set(http.StatusOK, `{"apiVersion":"v1","kind":"PodList","items":[]}`)
	poll()
	expect(t, m, "REMOVE http [http:a-node1 http:b-node1]")
	if err := s.Err(); err != nil {
		t.Errorf("Err() after a good poll = %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, h := range srv.headers {
		if h.Get("Authorization") != "Bearer t0k" {
			t.Errorf("a request went without the configured header: %v", h)
		}
	}
}

func TestHTTPSourceBoundsBodyAndTime(t *testing.T) {
	srv := &fakeServer{status: http.StatusOK, body: podManifest("web", "i:1") + "# " + strings.Repeat("x", 2000) + "\n"}
	s, m, poll := runHTTPSource(t, srv, HTTPOptions{MaxBodyBytes: 1000, Timeout: 50 * time.Millisecond})
	eventually(t, "the size refusal", func() bool { return s.Err() != nil })
	if err := s.Err(); !errors.Is(err, manifest.ErrTooLarge) {
		t.Errorf("Err() = %v, want ErrTooLarge", err)
	}
	srv.set(http.StatusOK, podManifest("web", "i:1"))
	poll()
	expect(t, m, "ADD http [http:web-node1]")

	srv.mu.Lock()
	srv.delay = time.Second
	srv.mu.Unlock()
	srv.set(http.StatusOK, podManifest("web", "i:2"))
	poll()
	if err := s.Err(); !errors.Is(err, manifest.ErrFetch) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("Err() after a slow server = %v, want a timeout", err)
	}
	if out := drain(m.Updates()); len(out) != 0 {
		t.Errorf("a timed-out poll changed pods: %v", out)
	}
}

func TestNewHTTPSourceNeedsItsOptions(t *testing.T) {
	sink := chanSink(make(chan podtypes.PodUpdate))
	for _, opts := range []HTTPOptions{{NodeName: "n", Sink: sink}, {URL: "http://x", Sink: sink}, {URL: "http://x", NodeName: "n"}} {
		if _, err := NewHTTPSource(opts); err == nil {
			t.Errorf("NewHTTPSource(%+v) succeeded", opts)
		}
	}
}
