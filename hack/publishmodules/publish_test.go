package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// writeModule makes a module directory holding go.mod and one Go file.
func writeModule(t *testing.T, parent, name, gomod string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{"go.mod": gomod, name + ".go": "package " + name + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func twoModules(t *testing.T, bRequires string) (a, b string) {
	t.Helper()
	src := t.TempDir()
	a = writeModule(t, src, "a", "module example.com/m/a\n\ngo 1.26.0\n")
	b = writeModule(t, src, "b", "module example.com/m/b\n\ngo 1.26.0\n\n"+bRequires)
	return a, b
}

func TestPublishWritesTheProxyLayout(t *testing.T) {
	a, b := twoModules(t, "require example.com/m/a v0.3.0\n")
	out := t.TempDir()
	if err := publish(out, "v0.3.0", []string{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"example.com/m/a", "example.com/m/b"} {
		dir := filepath.Join(out, path, "@v")
		list, err := os.ReadFile(filepath.Join(dir, "list"))
		if err != nil {
			t.Fatal(err)
		}
		if string(list) != "v0.3.0\n" {
			t.Errorf("%s list = %q, want the one version", path, list)
		}
		var info struct{ Version string }
		data, err := os.ReadFile(filepath.Join(dir, "v0.3.0.info"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &info); err != nil || info.Version != "v0.3.0" {
			t.Errorf("%s info = %s (%v), want Version v0.3.0", path, data, err)
		}
		mod, err := os.ReadFile(filepath.Join(dir, "v0.3.0.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(mod), "module "+path+"\n") {
			t.Errorf("%s .mod is not its go.mod: %q", path, mod)
		}
		// The go command's own check of a downloaded zip.
		files, err := modzip.CheckZip(module.Version{Path: path, Version: "v0.3.0"}, filepath.Join(dir, "v0.3.0.zip"))
		if err != nil {
			t.Fatalf("%s zip: %v", path, err)
		}
		if len(files.Valid) != 2 {
			t.Errorf("%s zip holds %v, want go.mod and one Go file", path, files.Valid)
		}
	}
}

func TestPublishAddsAVersionToTheList(t *testing.T) {
	src := t.TempDir()
	a := writeModule(t, src, "a", "module example.com/m/a\n\ngo 1.26.0\n")
	out := t.TempDir()
	for _, v := range []string{"v0.10.0", "v0.9.1"} {
		if err := publish(out, v, []string{a}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := os.ReadFile(filepath.Join(out, "example.com/m/a/@v/list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != "v0.9.1\nv0.10.0\n" {
		t.Errorf("list = %q, want both versions in semver order", list)
	}
}

func TestPublishRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, bRequires, version, want string
	}{
		{"a replace directive", "require example.com/m/a v0.3.0\n\nreplace example.com/m/a => ../a\n", "v0.3.0", "replace example.com/m/a => ../a: an importer ignores replace directives"},
		{"a sibling at another version", "require example.com/m/a v0.2.0\n", "v0.3.0", "requires example.com/m/a v0.2.0, but the modules are published at v0.3.0"},
		{"a version that is not canonical", "", "v0.3", `-version "v0.3": not a canonical semantic version`},
		{"a version of another major", "", "v2.0.0", "example.com/m/a@v2.0.0: invalid version: should be v0 or v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoModules(t, tc.bRequires)
			out := t.TempDir()
			err := publish(out, tc.version, []string{a, b})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("publish = %v, want an error containing %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a refused publication wrote %d entries into the proxy", len(entries))
			}
		})
	}
}

func TestPublishRefusesAPublishedVersion(t *testing.T) {
	src := t.TempDir()
	a := writeModule(t, src, "a", "module example.com/m/a\n\ngo 1.26.0\n")
	out := t.TempDir()
	if err := publish(out, "v0.3.0", []string{a}); err != nil {
		t.Fatal(err)
	}
	err := publish(out, "v0.3.0", []string{a})
	if err == nil || !strings.Contains(err.Error(), "a published version never changes") {
		t.Fatalf("second publish = %v, want a refusal", err)
	}
}
