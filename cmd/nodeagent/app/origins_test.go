package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const originPod = `apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  containers: [{name: c, image: busybox, imagePullPolicy: Never}]
`

func manifestUID(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := config.ParseManifest(data, config.ParseOptions{NodeName: "n1", Source: podtypes.FileSource, Origin: path})
	if err != nil {
		t.Fatal(err)
	}
	return string(pods[0].UID)
}

func TestOriginIndexFollowsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yml")
	write := func(p, name string) {
		if err := os.WriteFile(p, []byte(sprintf(originPod, name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "a")
	write(b, "b")
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: ["), 0o644)

	x := newOriginIndex(dir, "n1")
	got := x.snapshot()
	if len(got) != 2 || got[uid(manifestUID(t, a))] != a || got[uid(manifestUID(t, b))] != b {
		t.Fatalf("snapshot = %v, want a.yaml and b.yml", got)
	}

	// An edit gives the pod a new UID; a removal forgets the file.
	write(a, "a2")
	os.Chtimes(a, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	os.Remove(b)
	got = x.snapshot()
	if len(got) != 1 || got[uid(manifestUID(t, a))] != a {
		t.Fatalf("after edit and removal: snapshot = %v, want the new a.yaml only", got)
	}
}

func TestOriginIndexOfASingleFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "only.manifest")
	if err := os.WriteFile(p, []byte(sprintf(originPod, "only")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := newOriginIndex(p, "n1").snapshot(); got[uid(manifestUID(t, p))] != p {
		t.Errorf("snapshot = %v, want the file", got)
	}
}
