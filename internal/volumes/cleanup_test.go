package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// Cleanup removes nothing outside <RootDir>/pods/<uid>: a UID that is not
// one is refused, and a pod directory that is a symlink is removed, not
// followed.
func TestCleanupStaysInItsRoot(t *testing.T) {
	m, root := newManager(t)
	outside := canaryDir(t)
	// <root>/state/pods/../../host-secrets would be a sibling of state.
	sibling := filepath.Join(root, "host-secrets")
	if err := os.Rename(outside, sibling); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "state", "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []types.UID{"../../host-secrets", "..", ".", "", "a/b", "x_y", "../..", "host secrets", types.UID(make([]byte, 200))} {
		if err := m.Cleanup(uid); !errors.Is(err, ErrInvalidMount) {
			t.Errorf("Cleanup(%q) = %v, want %v", uid, err, ErrInvalidMount)
		}
	}
	link := filepath.Join(root, "state", "pods", "c0ffee")
	if err := os.Symlink(sibling, link); err != nil {
		t.Fatal(err)
	}
	if err := m.Cleanup("c0ffee"); err != nil {
		t.Fatalf("Cleanup of a symlinked pod dir: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink is still there: %v", err)
	}
	checkCanary(t, sibling)
}
