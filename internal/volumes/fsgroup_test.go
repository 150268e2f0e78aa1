package volumes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// fsGroup owns an emptyDir and what is in it, group-writable and setgid;
// a hostPath is the host's and is left alone.
func TestSetupFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group to any group needs root")
	}
	m, root := newManager(t)
	host := filepath.Join(root, "host")
	if err := os.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	fsGroup := int64(4321)
	pod := podWith([]corev1.Volume{emptyDir("scratch"), hostPath("h", host, corev1.HostPathDirectory)})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &fsGroup}
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	scratch := m.EmptyDirPath(pod.UID, "scratch")
	checkGroup := func(path string, wantGID int, wantBits os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if gid := fileGID(fi); gid != wantGID || fi.Mode()&wantBits != wantBits {
			t.Errorf("%s: gid %d mode %v, want gid %d with bits %v", path, gid, fi.Mode(), wantGID, wantBits)
		}
	}
	checkGroup(scratch, 4321, os.ModeSetgid|0o070)
	checkGroup(host, 0, 0)

	// A file left by a container of another group (a restart with another
	// fsGroup, or a change behind the pod's back) is taken over when the
	// root lost the group.
	file := filepath.Join(scratch, "data")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(scratch, -1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	checkGroup(scratch, 4321, os.ModeSetgid|0o070)
	checkGroup(file, 4321, 0o060)

	// Without fsGroup nothing changes hands.
	other := podWith([]corev1.Volume{emptyDir("plain")})
	other.UID = "u2"
	if _, err := m.Setup(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	checkGroup(m.EmptyDirPath(other.UID, "plain"), 0, 0)
}
