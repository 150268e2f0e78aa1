package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFileSourceIgnoresEditorFiles(t *testing.T) {
	dir := t.TempDir()
	_, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file []")
	for i, name := range []string{".web.yaml.swp", "web.yaml~", "#web.yaml#", ".#web.yaml", "4913", "web.yaml.bak",
		"web.yaml.tmp", "web.yaml.orig", "web.yaml.dpkg-old", "web.yaml.rpmnew", "web.yaml___jb_tmp___", ".hidden.yaml", "notes.txt", "README"} {
		writeFile(t, dir, name, podManifest("ignored"+string(rune('a'+i)), "img:1"))
	}
	writeFile(t, dir, "web.yaml", podManifest("web", "img:1"))
	expect(t, m, "ADD file [file:web-node1]")
	if diff := cmp.Diff([]string{"web-node1"}, mergedNames(m)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestFileSourceExtensionsAreConfigurable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", podManifest("a", "img:1"))
	writeFile(t, dir, "b.manifest", podManifest("b", "img:1"))
	writeFile(t, dir, "c.MANIFEST", podManifest("c", "img:1"))
	_, m := runFileSource(t, FileOptions{Path: dir, Extensions: []string{".manifest"}})
	expect(t, m, "ADD file [file:b-node1 file:c-node1]")
}

func TestFileSourcePicksUpAnAtomicRename(t *testing.T) {
	dir := t.TempDir()
	_, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file []")
	tmp := writeFile(t, dir, ".web.yaml.tmp-123", podManifest("web", "img:1"))
	if err := os.Rename(tmp, filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "ADD file [file:web-node1]")
}

func TestFileSourceFollowsAtomicWriterSymlinks(t *testing.T) {
	// The layout of a projected volume: web.yaml -> ..data/web.yaml and
	// ..data -> ..v1; an update swaps ..data to a new hidden directory.
	dir := t.TempDir()
	for _, v := range []string{"..v1", "..v2"} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "..v1"), "web.yaml", podManifest("web", "img:1"))
	writeFile(t, filepath.Join(dir, "..v2"), "web.yaml", podManifest("web", "img:2"))
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink("..data/web.yaml", filepath.Join(dir, "web.yaml")))
	_, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file [file:web-node1]")

	must(t, os.Symlink("..v2", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	expect(t, m, "REMOVE file [file:web-node1]")
	if u := next(t, m.Updates()); u.Pods[0].Spec.Containers[0].Image != "img:2" {
		t.Fatalf("after the swap: %s with %s", summarize(u), u.Pods[0].Spec.Containers[0].Image)
	}
}

func TestFileSourceSingleFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "pod.manifest", podManifest("web", "img:1"))
	writeFile(t, dir, "other.yaml", podManifest("other", "img:1"))
	_, m := runFileSource(t, FileOptions{Path: path})
	expect(t, m, "ADD file [file:web-node1]")
	writeFile(t, dir, "another.yaml", podManifest("another", "img:1"))
	writeFile(t, dir, "pod.manifest", podManifest("web", "img:2"))
	expect(t, m, "REMOVE file [file:web-node1]")
	expect(t, m, "ADD file [file:web-node1]")
	must(t, os.Remove(path))
	expect(t, m, "REMOVE file [file:web-node1]")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
