package integration

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/httplimits"
	"github.com/nodeagent/nodeagent/internal/httplimits/httplimitstest"
)

// The agent's servers, as built and started: clients that send nothing,
// trickle their headers or send huge ones are cut off, connections are
// capped, and a normal request gets through meanwhile.
func TestBinaryServersBoundTheirClients(t *testing.T) {
	h := newAgent(t)
	for name, dial := range map[string]func() (net.Conn, error){
		"serve address": func() (net.Conn, error) { return net.Dial("tcp", h.addr) },
		"local API":     func() (net.Conn, error) { return net.Dial("unix", h.socket) },
	} {
		path := map[string]string{"serve address": "/healthz", "local API": "/v1/healthz"}[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			httplimitstest.Check(t, dial, path, httplimits.Defaults())
		})
	}
}

// The manifest URL's credentials (userinfo and a query token from the
// config file, a header from --manifest-url-header-file) reach the
// manifest server, and appear nowhere else: not on the command line, in
// the log, the local API or the metrics.
func TestBinaryKeepsTheManifestURLCredentialsSecret(t *testing.T) {
	const userSecret, querySecret, headerSecret = "user-s3cret-1", "query-s3cret-2", "header-s3cret-3"
	var mu sync.Mutex
	var pods []*corev1.Pod
	failing := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		user, pass, _ := r.BasicAuth()
		if user != "agent" || pass != userSecret || r.URL.Query().Get("token") != querySecret || r.Header.Get("X-Token") != headerSecret {
			http.Error(w, "credentials missing", http.StatusForbidden)
			return
		}
		if failing {
			http.Error(w, "failing", http.StatusInternalServerError)
			return
		}
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
		for _, p := range pods {
			list.Items = append(list.Items, *p)
		}
		data, _ := yaml.Marshal(list)
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	set := func(fail bool, ps ...*corev1.Pod) {
		mu.Lock()
		defer mu.Unlock()
		failing, pods = fail, ps
	}
	set(false, testPod("web", shContainer("main", sleepForever)))

	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	url := strings.Replace(srv.URL, "http://", "http://agent:"+userSecret+"@", 1) + "/pods?token=" + querySecret
	cfg := write("nodeagent.yaml", "manifest-url: "+strconv.Quote(url)+"\n")
	headers := write("headers", "# for the manifest server\nX-Token: "+headerSecret+"\n")
	h := newAgent(t, "--config", cfg, "--manifest-url-header-file", headers, "--http-check-frequency", "500ms")
	// Before the harness's teardown: the URL stops serving the pod.
	t.Cleanup(func() { set(false) })

	h.waitPod("web", "running", 60*time.Second, runningContainer("main"))
	set(true, testPod("web", shContainer("main", sleepForever)))
	deadline := time.Now().Add(30 * time.Second)
	var shown []string
	for {
		errs, err := h.client.ManifestErrors(context.Background())
		if err == nil && errs.HTTP != nil {
			b, _ := json.Marshal(errs)
			shown = append(shown, "/v1/manifests/errors: "+string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failing URL never showed in /v1/manifests/errors: %v %+v", err, errs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	podList, err := h.client.Pods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(podList)
	shown = append(shown, "/v1/pods: "+string(b))

	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(h.proc.Process.Pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	shown = append(shown, "command line: "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	resp, err := http.Get("http://" + h.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	shown = append(shown, "/metrics: "+string(metrics))
	logged, err := os.ReadFile(filepath.Join(h.dir, "agent-1.log"))
	if err != nil {
		t.Fatal(err)
	}
	shown = append(shown, "log: "+string(logged))

	for _, s := range shown {
		what, _, _ := strings.Cut(s, ":")
		for _, secret := range []string{userSecret, querySecret, headerSecret} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows %s:\n%s", what, secret, s)
			}
		}
	}
	for _, s := range shown[:2] {
		if !strings.Contains(s, "token=xxxxx") {
			t.Errorf("the local API does not name the URL redacted:\n%s", s)
		}
	}
	if !strings.Contains(string(logged), "token=xxxxx") {
		t.Errorf("the log does not name the URL redacted:\n%s", h.log(40))
	}
}

// A manifest URL that redirects to another server: the pods it serves
// run, and that server sees neither the header credential nor a Referer
// (the first URL, with its query token).
func TestBinaryManifestURLRedirectLeaksNothing(t *testing.T) {
	const querySecret, headerSecret = "query-s3cret-5", "header-s3cret-6"
	var mu sync.Mutex
	var seen []string
	serve := true
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, "Referer="+r.Header.Get("Referer")+" X-Token="+r.Header.Get("X-Token")+" query="+r.URL.RawQuery)
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
		if serve {
			list.Items = append(list.Items, *testPod("moved", shContainer("main", sleepForever)))
		}
		data, _ := yaml.Marshal(list)
		w.Write(data)
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.RedirectHandler(other.URL+"/pods", http.StatusFound))
	t.Cleanup(first.Close)
	dir := t.TempDir()
	headers := filepath.Join(dir, "headers")
	if err := os.WriteFile(headers, []byte("X-Token: "+headerSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newAgent(t, "--manifest-url", first.URL+"/pods?token="+querySecret, "--manifest-url-header-file", headers, "--http-check-frequency", "500ms")
	// Before the harness's teardown: the URL stops serving the pod.
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		serve = false
	})
	h.waitPod("moved", "running", 60*time.Second, runningContainer("main"))
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the other server saw no request")
	}
	for _, s := range seen {
		if s != "Referer= X-Token= query=" {
			t.Errorf("the server redirected to saw %q, want no Referer, no header credential, no query", s)
		}
	}
}
