package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h.example/pods":                       "https://h.example/pods",
		"https://u:s3cret@h.example:8443/pods":         "https://xxxxx:xxxxx@h.example:8443/pods",
		"https://t0ken@h.example/pods":                 "https://xxxxx@h.example/pods",
		"http://h/pods?token=s3cret&node=n1&node=n2":   "http://h/pods?node=xxxxx&node=xxxxx&token=xxxxx",
		"http://h/pods?token=s3cret#frag-s3cret":       "http://h/pods?token=xxxxx",
		"http://h/pods?s3cret=%zz":                     "http://h/pods?&xxxxx",
		"http://h/pods?token=a;s3cret=b":               "http://h/pods?&xxxxx",
		"http://u:s3cret@h/p\x7f?token=s3cret":         "(a URL that does not parse)",
		"ftp://u:s3cret@h/pods?token=s3cret&x=s3cret2": "ftp://xxxxx:xxxxx@h/pods?token=xxxxx&x=xxxxx",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// recordingServer records what each request carried, and answers with
// what next says.
type recordingServer struct {
	mu   sync.Mutex
	seen []string // "path X-Token=... Authorization=..."
	next func(w http.ResponseWriter, r *http.Request)
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, fmt.Sprintf("%s X-Token=%s Authorization=%s", r.URL.Path, r.Header.Get("X-Token"), r.Header.Get("Authorization")))
	s.mu.Unlock()
	s.next(w, r)
}

func (s *recordingServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func start(t *testing.T, s *recordingServer) *httptest.Server {
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func redirectTo(url string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, url, http.StatusFound) }
}

func serveManifest(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte(podManifest("web", "i:1")))
}

// pollOnce makes a source for url and header, polls it once, and returns
// it with what it logged and the events it recorded.
func pollOnce(t *testing.T, url string, header http.Header) (s *HTTPSource, logged string) {
	t.Helper()
	var mu sync.Mutex
	var log strings.Builder
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(&log, prefix, args)
	}, funcr.Options{Verbosity: 10})
	rec := &recordingRecorder{}
	s, err := NewHTTPSource(HTTPOptions{URL: url, Header: header, NodeName: testNode, Sink: NewMerger(MergerOptions{Buffer: 10}), Logger: logger, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	s.poll(context.Background())
	mu.Lock()
	defer mu.Unlock()
	return s, log.String() + rec.String()
}

type recordingRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recordingRecorder) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventtype+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

func (r *recordingRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

var secretHeader = http.Header{"X-Token": {"hdr-s3cret"}, "Authorization": {"Bearer auth-s3cret"}}

// TestHTTPSourceKeepsCredentialsOnTheirServer: the configured headers and
// the URL's userinfo go to the URL's server, and to redirects that stay
// on it; once a redirect leaves it they are dropped for the rest of the
// chain.
func TestHTTPSourceKeepsCredentialsOnTheirServer(t *testing.T) {
	other := &recordingServer{next: serveManifest}
	otherURL := start(t, other).URL
	// Another host name for the same address: still another server.
	otherHost := strings.Replace(otherURL, "127.0.0.1", "localhost", 1)

	for _, tc := range []struct {
		name       string
		first      func(self string) func(http.ResponseWriter, *http.Request)
		wantFirst  []string
		wantOther  []string
		wantUserPw bool
	}{{
		name:      "no redirect",
		first:     func(string) func(http.ResponseWriter, *http.Request) { return serveManifest },
		wantFirst: []string{"/pods X-Token=hdr-s3cret Authorization=Bearer auth-s3cret"},
	}, {
		name: "a redirect on the same server keeps them",
		first: func(self string) func(http.ResponseWriter, *http.Request) {
			return func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/pods" {
					redirectTo(self+"/real")(w, r)
					return
				}
				serveManifest(w, r)
			}
		},
		wantFirst: []string{"/pods X-Token=hdr-s3cret Authorization=Bearer auth-s3cret", "/real X-Token=hdr-s3cret Authorization=Bearer auth-s3cret"},
	}, {
		name:      "a redirect to another port drops them",
		first:     func(string) func(http.ResponseWriter, *http.Request) { return redirectTo(otherURL + "/moved") },
		wantFirst: []string{"/pods X-Token=hdr-s3cret Authorization=Bearer auth-s3cret"},
		wantOther: []string{"/moved X-Token= Authorization="},
	}, {
		name:      "a redirect to another host drops them",
		first:     func(string) func(http.ResponseWriter, *http.Request) { return redirectTo(otherHost + "/moved") },
		wantFirst: []string{"/pods X-Token=hdr-s3cret Authorization=Bearer auth-s3cret"},
		wantOther: []string{"/moved X-Token= Authorization="},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			other.mu.Lock()
			other.seen = nil
			other.mu.Unlock()
			first := &recordingServer{}
			firstURL := start(t, first).URL
			first.next = tc.first(firstURL)
			s, _ := pollOnce(t, firstURL+"/pods", secretHeader)
			if err := s.Err(); err != nil {
				t.Fatalf("poll failed: %v", err)
			}
			if got := first.requests(); fmt.Sprint(got) != fmt.Sprint(tc.wantFirst) {
				t.Errorf("the URL's server saw %q, want %q", got, tc.wantFirst)
			}
			if got := other.requests(); fmt.Sprint(got) != fmt.Sprint(tc.wantOther) {
				t.Errorf("the other server saw %q, want %q", got, tc.wantOther)
			}
		})
	}

	t.Run("userinfo goes to the URL's server only", func(t *testing.T) {
		other.mu.Lock()
		other.seen = nil
		other.mu.Unlock()
		first := &recordingServer{next: redirectTo(otherURL + "/moved")}
		firstURL := start(t, first).URL
		withUser := strings.Replace(firstURL, "http://", "http://user:pw-s3cret@", 1)
		s, _ := pollOnce(t, withUser+"/pods", nil)
		if err := s.Err(); err != nil {
			t.Fatalf("poll failed: %v", err)
		}
		basic := "Basic " + "dXNlcjpwdy1zM2NyZXQ=" // user:pw-s3cret
		if got, want := first.requests(), []string{"/pods X-Token= Authorization=" + basic}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the URL's server saw %q, want %q", got, want)
		}
		if got, want := other.requests(), []string{"/moved X-Token= Authorization="}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the other server saw %q, want %q", got, want)
		}
	})

	t.Run("a chain that comes back after leaving stays without them", func(t *testing.T) {
		first := &recordingServer{}
		firstURL := start(t, first).URL
		bounce := &recordingServer{next: redirectTo(firstURL + "/back")}
		bounceURL := start(t, bounce).URL
		first.next = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/pods" {
				redirectTo(bounceURL+"/bounce")(w, r)
				return
			}
			serveManifest(w, r)
		}
		s, _ := pollOnce(t, firstURL+"/pods", secretHeader)
		if err := s.Err(); err != nil {
			t.Fatalf("poll failed: %v", err)
		}
		want := []string{"/pods X-Token=hdr-s3cret Authorization=Bearer auth-s3cret", "/back X-Token= Authorization="}
		if got := first.requests(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the URL's server saw %q, want %q", got, want)
		}
	})
}

// TestHTTPSourceRedirectsLeakNothing: a redirect that leaves the URL's
// server carries no Referer (the URL, query and all, may hold a token),
// and a redirect from https down to http is refused.
func TestHTTPSourceRedirectsLeakNothing(t *testing.T) {
	var mu sync.Mutex
	var referers []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		referers = append(referers, r.URL.Path+" Referer="+r.Header.Get("Referer"))
		mu.Unlock()
		if r.URL.Path == "/moved" {
			serveManifest(w, r)
			return
		}
		redirectTo("/moved")(w, r)
	}))
	t.Cleanup(other.Close)
	first := start(t, &recordingServer{next: redirectTo(other.URL + "/hop")})
	s, _ := pollOnce(t, first.URL+"/pods?token=q-s3cret", nil)
	if err := s.Err(); err != nil {
		t.Fatalf("poll failed: %v", err)
	}
	mu.Lock()
	got := fmt.Sprint(referers)
	mu.Unlock()
	if want := "[/hop Referer= /moved Referer=]"; got != want {
		t.Errorf("the other server saw %s, want %s", got, want)
	}

	secure := httptest.NewTLSServer(http.HandlerFunc(redirectTo(other.URL + "/moved")))
	t.Cleanup(secure.Close)
	rec := &recordingRecorder{}
	src, err := NewHTTPSource(HTTPOptions{URL: secure.URL + "/pods", NodeName: testNode, Sink: NewMerger(MergerOptions{Buffer: 10}),
		Client: secure.Client(), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	src.poll(context.Background())
	if err := src.Err(); !errors.Is(err, manifest.ErrFetch) || !strings.Contains(err.Error(), "leaves https for http") {
		t.Errorf("https to http: err %v, want the redirect refused", err)
	}
}

// TestHTTPSourceFollowsOnlyHTTPAndABoundedChain: a redirect to another
// scheme, and a redirect chain longer than the bound, fail the poll with
// a clear error.
func TestHTTPSourceFollowsOnlyHTTPAndABoundedChain(t *testing.T) {
	for _, target := range []string{"file:///etc/shadow", "ftp://127.0.0.1/pods", "gopher://127.0.0.1/pods"} {
		srv := &recordingServer{next: redirectTo(target)}
		s, _ := pollOnce(t, start(t, srv).URL+"/pods", nil)
		scheme, _, _ := strings.Cut(target, ":")
		want := fmt.Sprintf("scheme %q refused: only http and https are followed", scheme)
		if err := s.Err(); !errors.Is(err, manifest.ErrFetch) || !strings.Contains(err.Error(), want) {
			t.Errorf("redirect to %s: Err() = %v, want ErrFetch saying %q", target, err, want)
		}
	}

	loop := &recordingServer{next: func(w http.ResponseWriter, r *http.Request) { redirectTo(r.URL.Path+"x")(w, r) }}
	s, _ := pollOnce(t, start(t, loop).URL+"/pods", nil)
	if err := s.Err(); !errors.Is(err, manifest.ErrFetch) || !strings.Contains(err.Error(), fmt.Sprintf("stopped after %d redirects", maxRedirects)) {
		t.Errorf("endless redirects: Err() = %v, want ErrFetch saying it stopped", err)
	}
	if n := len(loop.requests()); n != maxRedirects+1 {
		t.Errorf("endless redirects: %d requests, want %d", n, maxRedirects+1)
	}

	for _, url := range []string{"ftp://u:s3cret@h/pods?token=s3cret", "file:///etc/pods.yaml", "h/pods", "http:///pods", "http://u:s3cret@h/p\x7f?token=s3cret"} {
		_, err := NewHTTPSource(HTTPOptions{URL: url, NodeName: testNode, Sink: NewMerger(MergerOptions{})})
		if err == nil {
			t.Errorf("NewHTTPSource(%q) succeeded", url)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewHTTPSource(%q) = %v, shows the secret", url, err)
		}
	}
}

// TestHTTPSourceShowsNoCredentials: errors, logs and events name the URL
// without its userinfo and query values, however the poll fails.
func TestHTTPSourceShowsNoCredentials(t *testing.T) {
	failing := start(t, &recordingServer{next: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	invalid := start(t, &recordingServer{next: func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{not json")) }})
	redirecting := start(t, &recordingServer{next: redirectTo("ftp://x/")})
	for name, base := range map[string]string{"status 403": failing.URL, "connection refused": closed.URL, "invalid body": invalid.URL, "bad redirect": redirecting.URL} {
		url := strings.Replace(base, "http://", "http://user:pw-s3cret@", 1) + "/pods?token=query-s3cret&node=n1"
		s, logged := pollOnce(t, url, secretHeader)
		err := s.Err()
		if err == nil {
			t.Fatalf("%s: the poll succeeded", name)
		}
		for what, text := range map[string]string{"Err()": err.Error(), "the log and events": logged} {
			if strings.Contains(text, "s3cret") {
				t.Errorf("%s: %s show a secret: %s", name, what, text)
			}
			if !strings.Contains(text, "token=xxxxx") {
				t.Errorf("%s: %s do not name the URL redacted: %s", name, what, text)
			}
		}
	}
}

// TestHTTPSourcePodsCarryNoCredentials: the pods record their origin
// redacted, and their identity does not hash the credential, so rotating
// it restarts no pod.
func TestHTTPSourcePodsCarryNoCredentials(t *testing.T) {
	srv := start(t, &recordingServer{next: serveManifest})
	var uids []string
	for _, secret := range []string{"s3cret-old", "s3cret-new"} {
		url := strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1) + "/pods?token=" + secret
		m := NewMerger(MergerOptions{Buffer: 10})
		s, err := NewHTTPSource(HTTPOptions{URL: url, NodeName: testNode, Sink: m})
		if err != nil {
			t.Fatal(err)
		}
		s.poll(context.Background())
		out := drainUpdates(m)
		if len(out) != 1 || len(out[0].Pods) != 1 {
			t.Fatalf("updates = %v, want one pod", out)
		}
		pod := out[0].Pods[0]
		data, _ := json.Marshal(pod)
		if strings.Contains(string(data), "s3cret") {
			t.Errorf("the pod carries the credential: %s", data)
		}
		if got, want := podtypes.ConfigOrigin(pod), RedactURL(url); got != want || !strings.Contains(got, "token=xxxxx") {
			t.Errorf("origin = %q, want %q", got, want)
		}
		uids = append(uids, string(pod.UID))
	}
	if uids[0] != uids[1] {
		t.Errorf("rotating the URL's credential changed the pod's UID: %v", uids)
	}
}

func drainUpdates(m *Merger) []podtypes.PodUpdate {
	var out []podtypes.PodUpdate
	for {
		select {
		case u := <-m.Updates():
			out = append(out, u)
		default:
			return out
		}
	}
}
