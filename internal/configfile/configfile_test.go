package configfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyKnownSkipsWhatTheToolDoesNotRead(t *testing.T) {
	fs := pflag.NewFlagSet("tool", pflag.ContinueOnError)
	dir := fs.String("manifest-dir", "", "")
	path := writeFile(t, "manifest-dir: /etc/m\ncri-endpoint: unix:///x.sock\n")
	if err := ApplyKnown(fs, path); err != nil {
		t.Fatalf("ApplyKnown: %v", err)
	}
	if *dir != "/etc/m" {
		t.Errorf("manifest-dir = %q, want /etc/m", *dir)
	}
	if _, err := Apply(fs, path); err == nil || !strings.Contains(err.Error(), `"cri-endpoint"`) {
		t.Errorf("Apply of an unknown key: error = %v, want one naming it", err)
	}
}

func TestApplyRefusesAnOversizedFile(t *testing.T) {
	fs := pflag.NewFlagSet("tool", pflag.ContinueOnError)
	path := writeFile(t, "# "+strings.Repeat("x", maxBytes)+"\n")
	if err := ApplyKnown(fs, path); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("error = %v, want the size limit", err)
	}
}

func TestDefaultsDeriveFromTheRootDir(t *testing.T) {
	if got := LocalAPISocket("/r"); got != "/r/nodeagent.sock" {
		t.Errorf("LocalAPISocket = %q", got)
	}
	if got := NodeName("Node-A"); got != "node-a" {
		t.Errorf("NodeName = %q, want it lowercased", got)
	}
}
