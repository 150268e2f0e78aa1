package images

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyringFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := write("root/config.json", `{"auths": {"r.example.com": {"username": "root", "password": "r"}}}`)
	home := write("home/.docker/config.json", `{"auths": {"r.example.com": {"username": "home", "password": "h"}}}`)
	legacy := write("legacy/.dockercfg", `{"r.example.com": {"username": "legacy", "password": "l"}}`)
	bad := write("bad/config.json", `{"auths": `)
	absent := filepath.Join(dir, "absent/config.json")
	for _, tc := range []struct {
		name    string
		paths   []string
		want    []AuthConfig
		wantErr bool
	}{
		{"the first that exists, alone", []string{absent, root, home}, []AuthConfig{{Username: "root", Password: "r"}}, false},
		{"a legacy .dockercfg", []string{absent, legacy}, []AuthConfig{{Username: "legacy", Password: "l"}}, false},
		{"none: empty", []string{absent}, nil, false},
		{"unparsable", []string{bad, root}, nil, true},
	} {
		kr, err := KeyringFromFiles(tc.paths)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tc.want, kr.Lookup("r.example.com/app")); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	paths := NodeDockerConfigPaths("/var/lib/nodeagent")
	if paths[0] != "/var/lib/nodeagent/config.json" || paths[len(paths)-1] != "/.dockercfg" {
		t.Errorf("paths %v: want the root dir's config.json first, /.dockercfg last", paths)
	}
}
