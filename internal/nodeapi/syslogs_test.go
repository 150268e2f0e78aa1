package nodeapi

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logDir is a system log directory with a file, a subdirectory, and a
// link to a file outside it.
func logDir(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "log")
	for name, content := range map[string]string{
		"log/syslog":       "boot ok\n",
		"log/pods/app.log": "app line\n",
		"secret":           "not a log\n",
	} {
		p := filepath.Join(top, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(top, "secret"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSystemLogs(t *testing.T) {
	dir := logDir(t)
	w := newWorldWith(t, nil, func(o *Options) { o.SystemLogDir = dir })

	if code, body := w.do("GET", "/logs/", "alice-token"); code != http.StatusOK || !strings.Contains(body, `href="syslog"`) || !strings.Contains(body, `href="pods/"`) {
		t.Errorf("the listing: %d %q, want syslog and pods/", code, body)
	}
	for path, want := range map[string]string{"/logs/syslog": "boot ok\n", "/logs/pods/app.log": "app line\n"} {
		if code, body := w.do("GET", path, "alice-token"); code != http.StatusOK || body != want {
			t.Errorf("GET %s: %d %q, want %q", path, code, body, want)
		}
	}
	if code, body := w.do("GET", "/logs/escape", "alice-token"); code != http.StatusForbidden || strings.Contains(body, "not a log") {
		t.Errorf("a link out of the directory: %d %q, want 403", code, body)
	}
	for _, path := range []string{"/logs/missing", "/logs/../secret", "/logs/pods/../../secret"} {
		if code, body := w.do("GET", path, "alice-token"); code == http.StatusOK || strings.Contains(body, "not a log") {
			t.Errorf("GET %s: %d %q, want a refusal", path, code, body)
		}
	}
	if code, body := w.do("GET", "/logs/?query=kubelet", "alice-token"); code != http.StatusBadRequest || !strings.Contains(body, "NodeLogQuery") {
		t.Errorf("a node log query: %d %q, want 400 naming the feature", code, body)
	}
	if code, body := w.do("POST", "/logs/syslog", "alice-token"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d %q, want 405", code, body)
	}
	// nodes/log alone, as the kubelet: proxy does not stand in for it.
	if code, body := w.do("GET", "/logs/syslog", "bob-token"); code != http.StatusForbidden || !strings.Contains(body, "subresource(s)=[log]") {
		t.Errorf("bob: %d %q, want 403 naming nodes/log alone", code, body)
	}
}

func TestSystemLogsDisabled(t *testing.T) {
	w := newWorld(t, nil) // no SystemLogDir
	if code, body := w.do("GET", "/logs/", "alice-token"); code != http.StatusMethodNotAllowed || !strings.Contains(body, "disabled") {
		t.Errorf("GET /logs/: %d %q, want 405 saying it is disabled", code, body)
	}
}
