package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics"
	clocktesting "k8s.io/utils/clock/testing"
)

// testPlugin is a credential provider plugin written as a shell script:
// each run appends a line to runs, saves its request, its arguments and
// the variable PLUGIN_VAR, then does what the test wrote to "then"
// (default: print the file "response").
type testPlugin struct {
	t     testing.TB
	dir   string
	cp    *CredentialProviders
	clock *clocktesting.FakeClock
	log   *logBuffer
	reg   metrics.KubeRegistry
}

const pluginScript = `#!/bin/sh
echo run >> "$PLUGIN_DIR/runs"
cat > "$PLUGIN_DIR/request"
echo "$* $PLUGIN_VAR" > "$PLUGIN_DIR/args"
. "$PLUGIN_DIR/then"
`

// providerYAML is the config of one provider named test-plugin, with
// extra lines (indented as its fields) added.
func providerYAML(dir, matchImages, defaultCache, extra string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: test-plugin
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  matchImages: %s
  defaultCacheDuration: %s
  args: ["--from-args"]
  env:
  - name: PLUGIN_DIR
    value: %s
  - name: PLUGIN_VAR
    value: from-env
%s`, matchImages, defaultCache, dir, extra)
}

func newTestPlugin(t testing.TB, matchImages, defaultCache string) *testPlugin {
	t.Helper()
	dir := t.TempDir()
	p := &testPlugin{t: t, dir: dir, clock: clocktesting.NewFakeClock(time.Unix(1e9, 0)), log: &logBuffer{}, reg: metrics.NewKubeRegistry()}
	p.write("bin/test-plugin", pluginScript, 0o755)
	p.then(`cat "$PLUGIN_DIR/response"`)
	cfg := p.write("config.yaml", providerYAML(dir, matchImages, defaultCache, ""), 0o600)
	cp, err := NewCredentialProviders(CredentialProviderOptions{
		ConfigPath: cfg, BinDir: filepath.Join(dir, "bin"),
		Timeout: 2 * time.Second, Clock: p.clock, Logger: p.log.logger(), Metrics: p.reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.cp = cp
	return p
}

func (p *testPlugin) write(name, data string, mode os.FileMode) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func (p *testPlugin) then(script string) { p.write("then", script+"\n", 0o600) }

// respond makes the plugin answer with cacheKeyType key, cacheDuration
// (omitted if empty) and auth.
func (p *testPlugin) respond(key, duration, auth string) {
	d := ""
	if duration != "" {
		d = fmt.Sprintf(`"cacheDuration": %q, `, duration)
	}
	p.write("response", fmt.Sprintf(`{"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "kind": "CredentialProviderResponse", "cacheKeyType": %q, %s"auth": %s}`, key, d, auth), 0o600)
}

func (p *testPlugin) runs() int {
	data, err := os.ReadFile(filepath.Join(p.dir, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func (p *testPlugin) file(name string) string {
	data, err := os.ReadFile(filepath.Join(p.dir, name))
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func (p *testPlugin) lookup(repo string) []AuthConfig {
	return p.cp.Lookup(context.Background(), repo)
}

// logBuffer keeps what a logger wrote.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, args)
	}, funcr.Options{})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func TestCredentialProvidersProtocol(t *testing.T) {
	p := newTestPlugin(t, `["*.example.com", "local:5000/team"]`, "0s")
	p.respond("Image", "", `{
		"reg.example.com/team": {"username": "team", "password": "t"},
		"reg.example.com": {"username": "host", "password": "h"},
		"reg.example.com/other": {"username": "other", "password": "o"},
		"*.example.com": {"username": "glob", "password": "g"}}`)

	got := p.lookup("reg.example.com/team/app")
	want := []AuthConfig{{Username: "team", Password: "t"}, {Username: "host", Password: "h"}, {Username: "glob", Password: "g"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	if req, want := p.file("request"), `"image":"reg.example.com/team/app"`; !strings.Contains(req, want) ||
		!strings.Contains(req, `"apiVersion":"credentialprovider.kubelet.k8s.io/v1"`) || !strings.Contains(req, `"kind":"CredentialProviderRequest"`) {
		t.Errorf("request %s, want a v1 CredentialProviderRequest with %s", req, want)
	}
	if args := p.file("args"); args != "--from-args from-env" {
		t.Errorf("plugin saw args and PLUGIN_VAR %q, want the provider's", args)
	}

	// matchImages: other hosts, ports and paths do not run the plugin.
	runs := p.runs()
	for _, repo := range []string{"example.com/app", "a.b.example.com/app", "local/team/app", "local:5000/other/app", "docker.io/library/busybox"} {
		if got := p.lookup(repo); len(got) != 0 {
			t.Errorf("%s: credentials %v, want none", repo, got)
		}
	}
	if p.runs() != runs {
		t.Errorf("the plugin ran %d times for images its matchImages do not cover", p.runs()-runs)
	}
	p.respond("Image", "", `{"local:5000": {"username": "local", "password": "l"}}`)
	if got := p.lookup("local:5000/team/app"); !cmp.Equal(got, []AuthConfig{{Username: "local", Password: "l"}}) {
		t.Errorf("local:5000/team/app: credentials %v, want the plugin's", got)
	}
}

func TestCredentialProvidersCache(t *testing.T) {
	auth := `{"*.example.com": {"username": "u", "password": "p"}}`
	for _, tc := range []struct {
		name     string
		key      string
		duration string // the answer's; empty: the provider's default (1m)
		// cachedFor: the images answered from the cache after a lookup
		// of a.example.com/x/app; the others run the plugin again.
		cachedFor []string
		ttl       time.Duration
	}{
		{"image", "Image", "", []string{"a.example.com/x/app"}, time.Minute},
		{"registry", "Registry", "30s", []string{"a.example.com/x/app", "a.example.com/y/other"}, 30 * time.Second},
		{"global", "Global", "2m", []string{"a.example.com/x/app", "a.example.com/y/other", "b.example.com/z"}, 2 * time.Minute},
		{"not cached", "Image", "0s", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPlugin(t, `["*.example.com"]`, "1m")
			p.respond(tc.key, tc.duration, auth)
			if got := p.lookup("a.example.com/x/app"); len(got) != 1 {
				t.Fatalf("credentials %v, want the plugin's", got)
			}
			ran := func(repo string) bool {
				t.Helper()
				before := p.runs()
				if got := p.lookup(repo); len(got) != 1 {
					t.Fatalf("%s: credentials %v, want the plugin's", repo, got)
				}
				return p.runs() > before
			}
			for _, repo := range []string{"a.example.com/x/app", "a.example.com/y/other", "b.example.com/z"} {
				if got, want := ran(repo), !slices.Contains(tc.cachedFor, repo); got != want {
					t.Errorf("%s: plugin ran: %v, want %v", repo, got, want)
				}
			}
			if tc.ttl > 0 {
				p.clock.Step(tc.ttl - time.Second)
				if ran("a.example.com/x/app") {
					t.Errorf("plugin ran %v after its answer, before the answer's %v passed", tc.ttl-time.Second, tc.ttl)
				}
				p.clock.Step(time.Second)
			}
			if !ran("a.example.com/x/app") {
				t.Errorf("plugin did not run once its answer's %v passed", tc.ttl)
			}
		})
	}
}

func TestCredentialProvidersFailures(t *testing.T) {
	const good = `cat "$PLUGIN_DIR/response"`
	for _, tc := range []struct {
		name string
		then string
		// response, when then prints it
		response string
		wantLog  string
	}{
		{"exit status", `echo "no such account" >&2; exit 3`, "", "exit status 3: no such account"},
		{"stderr bounded", `head -c 100000 /dev/zero | tr '\0' e >&2; exit 1`, "", "exit status 1: " + strings.Repeat("e", maxPluginStderr) + `"`},
		{"hangs", `sleep 60; echo done`, "", "killed after 2s"},
		{"not JSON", `echo "user:password"`, "", "answer is not JSON"},
		{"wrong version", good, `{"apiVersion": "credentialprovider.kubelet.k8s.io/v1beta1", "kind": "CredentialProviderResponse", "cacheKeyType": "Image"}`,
			`answered apiVersion "credentialprovider.kubelet.k8s.io/v1beta1"`},
		{"no type", good, `{"cacheKeyType": "Image", "auth": {}}`, `answered apiVersion "" kind ""`},
		{"unknown field", good, `{"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "kind": "CredentialProviderResponse", "cacheKeyType": "Image", "auths": {"x.example.com": {"username": "secret-user"}}}`,
			"not a valid CredentialProviderResponse"},
		{"bad cache key type", good, `{"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "kind": "CredentialProviderResponse", "cacheKeyType": "Pod"}`,
			`cacheKeyType "Pod"`},
		{"too large", `head -c 2000000 /dev/zero | tr '\0' ' '; cat "$PLUGIN_DIR/response"`, "", "answer larger than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPlugin(t, `["*.example.com"]`, "1m")
			p.then(tc.then)
			p.respond("Image", "", `{"*.example.com": {"username": "u", "password": "p"}}`)
			if tc.response != "" {
				p.write("response", tc.response, 0o600)
			}
			if got := p.lookup("a.example.com/app"); len(got) != 0 {
				t.Errorf("credentials %v, want none from a failed plugin", got)
			}
			log := strings.ReplaceAll(p.log.String(), `\"`, `"`)
			if !strings.Contains(log, tc.wantLog) || !strings.Contains(log, `"provider"="test-plugin"`) {
				t.Errorf("log %q, want the provider named and %q", log, tc.wantLog)
			}
			if strings.Contains(log, "secret-user") {
				t.Errorf("log %q quotes the plugin's answer", log)
			}
			// A failure is not cached: the next lookup runs it again.
			before := p.runs()
			p.lookup("a.example.com/app")
			if p.runs() == before {
				t.Errorf("a failed answer was cached")
			}
		})
	}
}

// TestCredentialProvidersConcurrent: lookups of one image at once run
// the plugin once.
func TestCredentialProvidersConcurrent(t *testing.T) {
	p := newTestPlugin(t, `["*.example.com"]`, "1m")
	p.respond("Image", "", `{"*.example.com": {"username": "u", "password": "p"}}`)
	p.then(`sleep 0.2; cat "$PLUGIN_DIR/response"`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := p.lookup("a.example.com/app"); len(got) != 1 {
				t.Errorf("credentials %v, want the plugin's", got)
			}
		}()
	}
	wg.Wait()
	if n := p.runs(); n != 1 {
		t.Errorf("plugin ran %d times for 8 lookups at once, want 1", n)
	}
}

// TestCredentialProvidersCallerLeaves: a lookup whose context ends stops
// waiting; the run goes on for the others and fills the cache.
func TestCredentialProvidersCallerLeaves(t *testing.T) {
	p := newTestPlugin(t, `["*.example.com"]`, "1m")
	p.respond("Image", "", `{"*.example.com": {"username": "u", "password": "p"}}`)
	p.then(`while [ ! -e "$PLUGIN_DIR/go" ]; do sleep 0.05; done; cat "$PLUGIN_DIR/response"`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []AuthConfig)
	go func() { done <- p.cp.Lookup(ctx, "a.example.com/app") }()
	cancel()
	if got := <-done; len(got) != 0 {
		t.Errorf("credentials %v for a caller that left", got)
	}
	p.write("go", "", 0o600)
	if got := p.lookup("a.example.com/app"); len(got) != 1 {
		t.Errorf("credentials %v, want the plugin's", got)
	}
	if n := p.runs(); n != 1 {
		t.Errorf("plugin ran %d times, want once", n)
	}
}

// BenchmarkCredentialProvidersLookup: a lookup answered from the cache
// against one that runs the plugin (a shell script) each time.
func BenchmarkCredentialProvidersLookup(b *testing.B) {
	for _, bc := range []struct{ name, duration string }{{"cached", "1h"}, {"plugin run", "0s"}} {
		b.Run(bc.name, func(b *testing.B) {
			p := newTestPlugin(b, `["*.example.com"]`, "1h")
			p.respond("Image", bc.duration, `{"*.example.com": {"username": "u", "password": "p"}}`)
			for b.Loop() {
				if got := p.lookup("a.example.com/app"); len(got) != 1 {
					b.Fatalf("credentials %v", got)
				}
			}
		})
	}
}
