package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentialProviderConfigValidation(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"plugin": 0o755, "other": 0o755, "not-executable": 0o644} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	const head = "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"
	const good = `
- name: plugin
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  matchImages: ["*.example.com", "registry.local:5000/team"]
  defaultCacheDuration: 5m`
	for _, tc := range []struct {
		name   string
		config string
		// want: every piece in the error; none: no error.
		want []string
	}{
		{"valid", head + "providers:" + good, nil},
		{"valid JSON, two providers", `{"apiVersion": "kubelet.config.k8s.io/v1", "kind": "CredentialProviderConfig", "providers": [
			{"name": "plugin", "apiVersion": "credentialprovider.kubelet.k8s.io/v1", "matchImages": ["a.example.com"], "defaultCacheDuration": "0s"},
			{"name": "other", "apiVersion": "credentialprovider.kubelet.k8s.io/v1", "matchImages": ["*.*.io"], "defaultCacheDuration": "1h",
			 "args": ["-v"], "env": [{"name": "A", "value": "b"}]}]}`, nil},
		{"no providers", head + "providers: []", []string{"providers: Required value"}},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", []string{"KubeletConfiguration"}},
		{"wrong group version", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: CredentialProviderConfig\nproviders: []", []string{"v1beta1"}},
		{"unknown field", head + "providers:" + good + "\n  matchImage: [x.io]", []string{`unknown field "providers[0].matchImage"`}},
		{"name with a slash", head + "providers:" + strings.Replace(good, "name: plugin", "name: ../bin/plugin", 1),
			[]string{"providers[0].name", `provider "../bin/plugin"`, "plain file name"}},
		{"name duplicated", head + "providers:" + good + good, []string{`providers[1].name: provider "plugin" is also named in`}},
		{"plugin absent", head + "providers:" + strings.Replace(good, "name: plugin", "name: absent", 1),
			[]string{`providers[0] "absent": no executable in the bin dir`}},
		{"plugin not executable", head + "providers:" + strings.Replace(good, "name: plugin", "name: not-executable", 1),
			[]string{`providers[0] "not-executable": no executable in the bin dir`}},
		{"apiVersion", head + "providers:" + strings.Replace(good, "provider.kubelet.k8s.io/v1", "provider.kubelet.k8s.io/v1beta1", 1),
			[]string{"providers[0].apiVersion: Unsupported value", "credentialprovider.kubelet.k8s.io/v1beta1", `provider "plugin"`}},
		{"no matchImages", head + "providers:" + strings.Replace(good, `["*.example.com", "registry.local:5000/team"]`, "[]", 1),
			[]string{"providers[0].matchImages: Required value", `provider "plugin"`}},
		{"bad pattern", head + "providers:" + strings.Replace(good, `"registry.local:5000/team"`, `"[a.example.com"`, 1),
			[]string{"providers[0].matchImages[1]: Invalid value", "[a.example.com", "not a registry location"}},
		{"no defaultCacheDuration", head + "providers:" + strings.Replace(good, "defaultCacheDuration: 5m", "", 1),
			[]string{"providers[0].defaultCacheDuration: Required value"}},
		{"negative defaultCacheDuration", head + "providers:" + strings.Replace(good, "5m", "-1s", 1),
			[]string{"providers[0].defaultCacheDuration", "must not be negative"}},
		{"tokenAttributes", head + "providers:" + good + "\n  tokenAttributes: {serviceAccountTokenAudience: registry, requireServiceAccount: true, cacheType: Token}",
			[]string{"providers[0].tokenAttributes: Forbidden", "service account tokens for plugins are not implemented by nodeagent", `provider "plugin"`}},
		{"env without a name", head + "providers:" + good + "\n  env: [{name: '', value: x}]",
			[]string{"providers[0].env[0].name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "credential-providers.yaml")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := NewCredentialProviders(CredentialProviderOptions{ConfigPath: path, BinDir: bin})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("error %v for a valid config", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one with %q", tc.want)
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
		})
	}
	if _, err := NewCredentialProviders(CredentialProviderOptions{ConfigPath: filepath.Join(dir, "absent.yaml"), BinDir: bin}); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("absent config: error %v, want one naming the file", err)
	}
}

func TestCredentialProviderConfigDirectory(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	provider := func(name string) string {
		return "\n- name: " + name + "\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [" + name + ".example.com]\n  defaultCacheDuration: 1m"
	}
	config := func(names ...string) string {
		s := "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:"
		if len(names) == 0 {
			return s + " []"
		}
		for _, n := range names {
			s += provider(n)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		// want: the providers in order; else wantErr: every piece in the error.
		want    []string
		wantErr []string
	}{
		{"merged in lexical order", map[string]string{"20-b.yaml": config("b"), "10-c.yml": config("c"), "30-a.json": `{"apiVersion": "kubelet.config.k8s.io/v1", "kind": "CredentialProviderConfig", "providers": [
			{"name": "a", "apiVersion": "credentialprovider.kubelet.k8s.io/v1", "matchImages": ["a.example.com"], "defaultCacheDuration": "0s"}]}`}, []string{"c", "b", "a"}, nil},
		{"other files and subdirectories left alone", map[string]string{"1.yaml": config("a"), "README": "not a config", "old.yaml.bak": "x: [", "sub.yaml/x.yaml": config("b")}, []string{"a"}, nil},
		{"a file without providers", map[string]string{"1.yaml": config(), "2.yaml": config("b", "a")}, []string{"b", "a"}, nil},
		{"a name in two files", map[string]string{"1.yaml": config("a"), "2.yaml": config("b", "a")},
			nil, []string{"2.yaml: providers[1].name", `provider "a" is also named in`, "1.yaml"}},
		{"no providers at all", map[string]string{"1.yaml": config(), "2.json": config()}, nil, []string{"providers: Required value"}},
		{"no config files", map[string]string{"notes.txt": config("a")}, nil, []string{"without config files (.json, .yaml, .yml)"}},
		{"an invalid file is named", map[string]string{"1.yaml": config("a"), "2.yaml": strings.Replace(config("b"), "1m", "-1m", 1)},
			nil, []string{"2.yaml: providers[0].defaultCacheDuration", "must not be negative"}},
		{"a file that does not decode is named", map[string]string{"1.yaml": config("a"), "2.yaml": "kind: ["}, nil, []string{"2.yaml:"}},
		{"too large together", map[string]string{"1.yaml": config("a") + "\n#" + strings.Repeat("x", maxProviderConfigBytes/2),
			"2.yaml": config("b") + "\n#" + strings.Repeat("x", maxProviderConfigBytes/2)}, nil, []string{"2.yaml", "larger than"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cp, err := NewCredentialProviders(CredentialProviderOptions{ConfigPath: dir, BinDir: bin})
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want one with %q", tc.wantErr)
				}
				for _, w := range append(tc.wantErr, dir) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q, want it to say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range cp.providers {
				got = append(got, p.cfg.Name)
				if p.bin != filepath.Join(bin, p.cfg.Name) {
					t.Errorf("provider %q: bin %q", p.cfg.Name, p.bin)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("providers %q, want %q", got, tc.want)
			}
		})
	}
}
