package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// volumeLayout builds a volume full of symlinks, some leading out of it
// onto a directory "outside" that holds a canary, and returns the
// volume's and the outside directory's paths.
func volumeLayout(t *testing.T) (vol, outside string) {
	t.Helper()
	dir := t.TempDir()
	vol, outside = filepath.Join(dir, "vol"), filepath.Join(dir, "outside")
	for _, d := range []string{outside, filepath.Join(vol, "dir", "sub"), filepath.Join(vol, "dir2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, content := range map[string]string{
		filepath.Join(outside, "canary"):  "canary",
		filepath.Join(vol, "dir", "file"): "inside",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"abs":           outside,      // absolute, out
		"rel":           "../outside", // relative, out
		"deep":          "dir/sub/../../../outside",
		"chain1":        "chain2", // a chain whose last link leaves
		"chain2":        "chain3",
		"chain3":        "../outside",
		"ok1":           "ok2", // a chain that stays inside
		"ok2":           "dir",
		"dir/up":        "../dir2", // the last component, inside
		"dir/sub/root":  "../..",   // back to the volume's root: allowed
		"dir/sub/above": "../../..",
		"dangling":      "missing",
		"dangling-abs":  filepath.Join(outside, "new"),
		"loop":          "loop",
		"magic":         "/proc/self/root",
	} {
		if err := os.Symlink(target, filepath.Join(vol, link)); err != nil {
			t.Fatal(err)
		}
	}
	return vol, outside
}

// sameFile tells whether fd is the file at path.
func sameFile(t *testing.T, fd int, path string) bool {
	t.Helper()
	var a, b unix.Stat_t
	if err := unix.Fstat(fd, &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(path, &b); err != nil {
		t.Fatal(err)
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

func openDir(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Both resolvers, openat2's and the walk older kernels get, follow the
// same rules: symlinks are followed while they stay in the volume, never
// out of it.
func TestOpenBeneath(t *testing.T) {
	vol, _ := volumeLayout(t)
	for _, resolver := range []struct {
		name string
		open func(int, string) (int, error)
	}{{"openat2", openat2Beneath}, {"walk", walkBeneath}} {
		root := openDir(t, vol)
		for _, tc := range []struct {
			subPath string
			want    string // beneath vol, when it resolves
			wantErr error
		}{
			{subPath: "dir", want: "dir"},
			{subPath: "dir/file", want: "dir/file"},
			{subPath: "ok1/file", want: "dir/file"},
			{subPath: "dir/up", want: "dir2"},
			{subPath: "dir/sub/root/dir2", want: "dir2"},
			{subPath: "abs", wantErr: errEscapes},
			{subPath: "abs/canary", wantErr: errEscapes},
			{subPath: "rel", wantErr: errEscapes},
			{subPath: "rel/canary", wantErr: errEscapes},
			{subPath: "deep", wantErr: errEscapes},
			{subPath: "chain1", wantErr: errEscapes},
			{subPath: "chain1/canary", wantErr: errEscapes},
			{subPath: "dir/sub/above", wantErr: errEscapes},
			{subPath: "dangling", wantErr: unix.ENOENT},
			{subPath: "dangling-abs", wantErr: errEscapes},
			{subPath: "loop", wantErr: unix.ELOOP},
			{subPath: "magic", wantErr: errEscapes},
			{subPath: "dir/file/x", wantErr: unix.ENOTDIR},
		} {
			t.Run(resolver.name+" "+tc.subPath, func(t *testing.T) {
				fd, err := resolver.open(root, tc.subPath)
				if tc.wantErr != nil {
					if err == nil {
						unix.Close(fd)
					}
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("error = %v, want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("error = %v, want %s", err, tc.want)
				}
				defer unix.Close(fd)
				if !sameFile(t, fd, filepath.Join(vol, tc.want)) {
					t.Errorf("resolved to another file than %s", tc.want)
				}
			})
		}
	}
}

// Missing directories of a subPath are created with the volume's owner,
// group and mode, never through a symlink, never outside.
func TestMakeDirsBeneath(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving directories another owner needs root")
	}
	vol, outside := volumeLayout(t)
	if err := os.Chown(vol, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(vol, 0o2770); err != nil {
		t.Fatal(err)
	}
	root := openDir(t, vol)

	fd, err := makeDirsBeneath(root, "a/b/c")
	if err != nil {
		t.Fatalf("makeDirsBeneath(a/b/c): %v", err)
	}
	defer unix.Close(fd)
	if !sameFile(t, fd, filepath.Join(vol, "a/b/c")) {
		t.Error("the descriptor is not of a/b/c")
	}
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(vol, d), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 1234 || st.Gid != 5678 || st.Mode&0o7777 != 0o2770 {
			t.Errorf("%s: owner %d:%d mode %o, want the volume's 1234:5678 2770", d, st.Uid, st.Gid, st.Mode&0o7777)
		}
	}
	// Through a symlink that stays inside: created where it points.
	if fd, err := makeDirsBeneath(root, "ok1/new"); err != nil {
		t.Errorf("ok1/new: %v", err)
	} else {
		unix.Close(fd)
		if _, err := os.Stat(filepath.Join(vol, "dir", "new")); err != nil {
			t.Errorf("dir/new not created: %v", err)
		}
	}

	for _, tc := range []struct {
		subPath string
		wantErr error
	}{
		{"abs/new", errEscapes},
		{"rel/new", errEscapes},
		{"chain1/new", errEscapes},
		{"dangling-abs", errEscapes},
		{"dangling", errDangling},
		{"dangling/new", errDangling},
	} {
		fd, err := makeDirsBeneath(root, tc.subPath)
		if err == nil {
			unix.Close(fd)
		}
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("makeDirsBeneath(%s) = %v, want %v", tc.subPath, err, tc.wantErr)
		}
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 || entries[0].Name() != "canary" {
		t.Errorf("outside holds %v (%v), want only its canary", entries, err)
	}
	if _, err := os.Lstat(filepath.Join(vol, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling symlink's target was created: %v", err)
	}
}

func TestParseMountPoints(t *testing.T) {
	data := []byte(`22 1 0:21 / / rw - ext4 /dev/root rw
30 22 0:21 /vol/dir /root/pods/u1/volume-subpaths/v/c/0 rw - ext4 /dev/root rw
31 30 0:21 /vol/dir /root/pods/u1/volume-subpaths/v/c/0 rw - ext4 /dev/root rw
32 22 0:21 /x /root/pods/u1/volume-subpaths/v/c/with\040space rw - ext4 /dev/root rw
33 22 0:21 /y /root/pods/u10/volume-subpaths/v/c/0 rw - ext4 /dev/root rw
`)
	got, err := parseMountPoints(data, "/root/pods/u1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/root/pods/u1/volume-subpaths/v/c/0", "/root/pods/u1/volume-subpaths/v/c/with space"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("mount points = %q, want %q", got, want)
	}
	if _, err := parseMountPoints([]byte(`1 1 0:1 / /bad\04 rw - x y rw`), "/"); err == nil {
		t.Error("a truncated escape was taken")
	}
}
