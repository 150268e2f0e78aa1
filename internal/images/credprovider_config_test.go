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
		{"name duplicated", head + "providers:" + good + good, []string{"providers[1].name: Duplicate value"}},
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
