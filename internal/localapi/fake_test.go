package localapi

import (
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// fakeProvider is a Provider whose answers a test sets.
type fakeProvider struct {
	mu        sync.Mutex
	pods      []PodInfo
	timelines map[types.UID][]TimelineEntry
	files     map[string]error
	url       string
	httpErr   error
	ready     error
	problems  []string
}

func (f *fakeProvider) Pods() []PodInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]PodInfo(nil), f.pods...)
}

func (f *fakeProvider) Timeline(uid types.UID) []TimelineEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.timelines[uid]
}

func (f *fakeProvider) FileErrors() map[string]error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files
}

func (f *fakeProvider) HTTPError() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.url, f.httpErr
}

func (f *fakeProvider) Ready() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready
}

func (f *fakeProvider) Problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.problems
}

// socketPath returns a path short enough for a unix socket (108 bytes),
// in a directory removed when the test ends.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "localapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "api.sock")
}

// serve serves the API of p with httptest on a temp unix socket and
// returns a Client for it.
func serve(t *testing.T, p Provider) *Client {
	t.Helper()
	path := socketPath(t)
	s, err := New(Options{SocketPath: path, Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	t.Cleanup(ts.Close)
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
