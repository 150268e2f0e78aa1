package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestIsManifestNameAgreesWithTheFileSource(t *testing.T) {
	for name, want := range map[string]bool{
		"web.yaml": true, "web.YML": true, "web.json": true,
		".web.yaml.tmp": false, "web.yaml~": false, "web.yaml.bak": false, "web.txt": false, ".yaml": false,
	} {
		if got := IsManifestName(name); got != want {
			t.Errorf("IsManifestName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestReadManifestFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "web.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	must(t, os.WriteFile(good, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: img:1}]}\n"), 0o600))
	must(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n"), 0o600))
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource}

	pods, err := ReadManifestFile(good, opts)
	if err != nil || len(pods) != 1 || pods[0].Name != "web-"+testNode || pods[0].Annotations[podtypes.ConfigOriginAnnotationKey] != good {
		t.Fatalf("good manifest: pods %v, err %v", pods, err)
	}
	_, err = ReadManifestFile(bad, opts)
	var me *ManifestError
	if !errors.As(err, &me) || me.Origin != bad || me.Field() != "spec.containers[0].image" {
		t.Errorf("bad manifest: error %v, want a ManifestError naming the file and spec.containers[0].image", err)
	}
	if _, err := ReadManifestFile(filepath.Join(dir, "none.yaml"), opts); !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: error %v, want ErrRead saying so", err)
	}
}

func TestEditorArtifactsAndExtensions(t *testing.T) {
	exts := []string{".yaml", ".yml", ".json"}
	manifests := []string{"web.yaml", "web.yml", "web.json", "WEB.YAML", "kube-apiserver.yaml", "a.b.yaml"}
	ignored := []string{".web.yaml", ".web.yaml.swp", "web.yaml.swp", "web.yaml~", "#web.yaml#", ".#web.yaml", "4913",
		"web.yaml.bak", "web.yaml.tmp", "web.yaml.kate-swp", "web.yaml___jb_old___", "..data", "web", "web.txt", ".yaml", "yaml"}
	for _, n := range manifests {
		if isEditorArtifact(n) || !hasExtension(n, exts) {
			t.Errorf("%q should be read", n)
		}
	}
	for _, n := range ignored {
		if !isEditorArtifact(n) && hasExtension(n, exts) {
			t.Errorf("%q should be ignored", n)
		}
	}
	if !slices.Contains(ignored, "4913") {
		t.Fatal("vim's write test file must be listed")
	}
}
