package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func writeFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHeaderFile: credentials come from a file only its owner may read,
// and no error shows a header's value.
func TestHeaderFile(t *testing.T) {
	const lines = "# credentials for the manifest server\n\nAuthorization: Bearer s3cret:with:colons\r\nX-A: 1\nX-A:2\n"
	for _, mode := range []os.FileMode{0o600, 0o400} {
		o := &Options{ManifestURLHeaders: []string{"X-Flag: f"}, ManifestURLHeaderFile: writeFile(t, lines, mode)}
		h, err := o.urlHeader()
		if err != nil {
			t.Fatalf("mode %04o: %v", mode, err)
		}
		if h.Get("Authorization") != "Bearer s3cret:with:colons" || strings.Join(h.Values("X-A"), ",") != "1,2" || h.Get("X-Flag") != "f" || len(h) != 3 {
			t.Errorf("mode %04o: headers = %v", mode, h)
		}
	}

	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"world-readable":     {lines, 0o644, "mode 0644 lets its group or others access it"},
		"group-readable":     {lines, 0o640, "mode 0640"},
		"group-writable":     {lines, 0o620, "mode 0620"},
		"no colon":           {"Authorization Bearer s3cret\n", 0o600, "line 1: want 'Name: value' (the value is not shown)"},
		"bad name":           {"\nBearer s3cret: x\n", 0o600, "line 2: the text before the first colon is not a valid header name"},
		"bad value":          {"X-A: s3cret\x01\n", 0o600, "line 1: the value of X-A has characters a header cannot carry"},
		"a long line":        {"X-A: " + strings.Repeat("s3cret", maxHeaderFileBytes/6-10) + "\n\x01", 0o600, "line 2: want 'Name: value'"},
		"too large":          {"X-A: " + strings.Repeat("s3cret", maxHeaderFileBytes/6+1), 0o600, "longer than the limit of 65536 bytes"},
		"not a regular file": {"", 0o700 | os.ModeDir, "not a regular file"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, tc.content, 0o600)
			if tc.mode&os.ModeDir != 0 {
				path = t.TempDir()
			}
			if err := os.Chmod(path, tc.mode.Perm()); err != nil {
				t.Fatal(err)
			}
			_, err := (&Options{ManifestURLHeaderFile: path}).urlHeader()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error = %v, want one naming %s and saying %q", err, path, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the value: %v", err)
			}
		})
	}

	// The kubelet's syntax: pairs separated by commas, a name repeated adds
	// a value; the older one, one "Name: value" a flag, reads the same.
	h, err := (&Options{ManifestURLHeaders: []string{"a:x,b:y", "a: z", "Authorization: Bearer t"}}).urlHeader()
	if err != nil || !slices.Equal(h.Values("A"), []string{"x", "z"}) || h.Get("B") != "y" || h.Get("Authorization") != "Bearer t" {
		t.Errorf("--manifest-url-header a:x,b:y, a: z, Authorization: Bearer t: %v, %v", h, err)
	}
	if _, err := (&Options{ManifestURLHeaders: []string{"Authorization Bearer s3cret"}}).urlHeader(); err == nil ||
		strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "--manifest-url-header #1") {
		t.Errorf("a malformed --manifest-url-header: error = %v, want one naming it without its value", err)
	}
}

// TestURLCredentialsStayOffTheCommandLine: userinfo in --manifest-url on
// the command line is refused; a config file with credentials must be
// readable by its owner only; errors show the URL redacted.
func TestURLCredentialsStayOffTheCommandLine(t *testing.T) {
	_, err := parseArgs(t, "--manifest-url=https://user:s3cret@h.example/pods?token=s3cret")
	if err == nil || !strings.Contains(err.Error(), "carries credentials on the command line") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("userinfo on the command line: error = %v, want a refusal without the secret", err)
	}

	const cfg = "manifest-url: https://user:s3cret@h.example/pods\n"
	if _, err := parseArgs(t, "--config", writeConfig(t, cfg)); err != nil {
		t.Errorf("userinfo in a private config file: %v", err)
	}
	for _, yaml := range []string{cfg, "manifest-dir: /m\nmanifest-url: https://h.example/pods\nmanifest-url-header: ['Authorization: Bearer s3cret']\n"} {
		path := writeConfig(t, yaml)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := parseArgs(t, "--config", path); err == nil || !strings.Contains(err.Error(), "mode 0644") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("credentials in a world-readable config file: error = %v, want a refusal naming the mode", err)
		}
	}
	path := writeConfig(t, "manifest-url: https://h.example/pods?node=n1\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseArgs(t, "--config", path); err != nil {
		t.Errorf("a world-readable config file without credentials: %v", err)
	}

	for _, bad := range []string{"ftp://h.example/pods?token=s3cret", "https:///pods?token=s3cret", "https://h.example/p\x7f?token=s3cret"} {
		_, err := parseArgs(t, "--manifest-url="+bad)
		if err == nil || !strings.Contains(err.Error(), "must be an http:// or https:// URL") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--manifest-url=%q: error = %v, want a refusal without the secret", bad, err)
		}
	}
	if _, err := parseArgs(t, "--manifest-dir=/m", "--manifest-url-header-file=/h"); err == nil || !strings.Contains(err.Error(), "need a --manifest-url") {
		t.Errorf("a header file without a URL: error = %v", err)
	}
}

func newFlagSet(o *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("nodeagent", pflag.ContinueOnError)
	o.AddFlags(fs)
	return fs
}

func TestCommandLineWarnings(t *testing.T) {
	o := NewOptions()
	fs := newFlagSet(o)
	if err := fs.Parse([]string{"--manifest-url=https://h.example/pods?token=s3cret", "--manifest-url-header=X-Token: s3cret"}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(commandLineWarnings(fs, o), "\n")
	if !strings.Contains(got, "--manifest-url-header is given on the command line") || !strings.Contains(got, "--manifest-url has a query") || strings.Contains(got, "s3cret") {
		t.Errorf("warnings = %q", got)
	}
	o = NewOptions()
	fs = newFlagSet(o)
	if err := fs.Parse([]string{"--manifest-url=https://h.example/pods", "--manifest-url-header-file=/h"}); err != nil {
		t.Fatal(err)
	}
	if w := commandLineWarnings(fs, o); len(w) != 0 {
		t.Errorf("warnings without credentials on the command line: %q", w)
	}
}

type fakeAgent struct{ pods []agent.PodInfo }

func (f fakeAgent) Pods() []agent.PodInfo               { return f.pods }
func (f fakeAgent) Timeline(types.UID) []timeline.Entry { return nil }
func (f fakeAgent) Problems() []string                  { return nil }

// TestLocalAPIShowsTheURLRedacted: the local API names the manifest URL
// of HTTP pods (from the origin the source records) and of the URL's error
// without its credentials.
func TestLocalAPIShowsTheURLRedacted(t *testing.T) {
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}`))
	}))
	defer srv.Close()
	o := &Options{ManifestURL: strings.Replace(srv.URL, "http://", "http://user:pw-s3cret@", 1) + "/pods?token=q-s3cret"}
	merger := config.NewMerger(config.MergerOptions{Buffer: 10})
	src, err := config.NewHTTPSource(config.HTTPOptions{
		URL: o.ManifestURL, Header: http.Header{"Authorization": {"Bearer h-s3cret"}}, NodeName: "node1",
		Sink: merger, Interval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	var pod *corev1.Pod
	select {
	case u := <-merger.Updates():
		pod = u.Pods[0]
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP source sent no pod")
	}
	failing.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for src.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// As the agent reports a pod: its origin is the one its source recorded.
	info := agent.PodInfo{Pod: pod, Source: podtypes.HTTPSource, Origin: podtypes.ConfigOrigin(pod)}
	p := newAPIProvider(fakeAgent{pods: []agent.PodInfo{info}}, nil, src, o, func() error { return nil })
	api, err := localapi.New(localapi.Options{SocketPath: "/unused", Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()
	for _, path := range []string{"/v1/pods", "/v1/pods/default/" + pod.Name, "/v1/manifests/errors"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "s3cret") || !strings.Contains(string(body), "token=xxxxx") {
			t.Errorf("GET %s = %d %s, want the URL shown redacted", path, resp.StatusCode, body)
		}
	}
}
