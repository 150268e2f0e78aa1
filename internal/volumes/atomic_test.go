package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's layout: a timestamped directory, ..data pointing at it,
// each top-level path a link through ..data.
func TestAtomicLayout(t *testing.T) {
	src := newFakeSources()
	src.setConfigMap("c", map[string]string{"a": "1", "b": "2"})
	m, _ := newAPIManager(t, src)
	pod := apiPod(cmVolume("cfg", "c", []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "b", Path: "dir/sub/b"}}, nil, nil))
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	dir := m.volumeDir(pod.UID, configMapDir, "cfg")
	ts, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil || !strings.HasPrefix(ts, "..20") || strings.Contains(ts, "/") {
		t.Fatalf("..data -> %q, %v; want a timestamped sibling", ts, err)
	}
	for link, target := range map[string]string{"a": "..data/a", "dir": "..data/dir"} {
		if got, err := os.Readlink(filepath.Join(dir, link)); err != nil || got != target {
			t.Errorf("%s -> %q, %v; want %q", link, got, err, target)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, ts, "dir", "sub", "b")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the file is not in the timestamped directory: %v", err)
	}
	names := dirNames(t, dir)
	if want := []string{"..data", ts, "a", "dir"}; fmt.Sprint(names) != fmt.Sprint(sortedCopy(want)) {
		t.Errorf("volume holds %v, want %v", names, sortedCopy(want))
	}
}

// An unchanged payload rewrites nothing; a changed one swaps ..data and
// leaves no trace of the old set: no old directory, no link to a key
// that is gone.
func TestAtomicRewriteOnlyOnChange(t *testing.T) {
	src := newFakeSources()
	src.setConfigMap("c", map[string]string{"a": "1", "gone": "x"})
	m, _ := newAPIManager(t, src)
	pod := apiPod(cmVolume("cfg", "c", nil, nil, nil))
	cleanupPod(t, m, pod)
	setup := func() {
		t.Helper()
		if _, err := m.Setup(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	setup()
	dir := m.volumeDir(pod.UID, configMapDir, "cfg")
	first, _ := os.Readlink(filepath.Join(dir, dataLink))
	inode := inodeOf(t, filepath.Join(dir, "a"))
	setup()
	if again, _ := os.Readlink(filepath.Join(dir, dataLink)); again != first || inodeOf(t, filepath.Join(dir, "a")) != inode {
		t.Errorf("an unchanged payload was rewritten (..data %s -> %s)", first, again)
	}

	src.setConfigMap("c", map[string]string{"a": "2", "new": "n"})
	setup()
	second, _ := os.Readlink(filepath.Join(dir, dataLink))
	if second == first {
		t.Fatal("..data not swapped after a change")
	}
	if got := readVolume(t, dir); fmt.Sprint(got) != fmt.Sprint(map[string]string{"a": "2", "new": "n"}) {
		t.Errorf("volume after the change = %v", got)
	}
	if names := dirNames(t, dir); fmt.Sprint(names) != fmt.Sprint(sortedCopy([]string{"..data", second, "a", "new"})) {
		t.Errorf("volume holds %v: the old directory or link stayed", names)
	}
}

// Labels and annotations written by a downwardAPI volume follow the pod's
// metadata at the next Setup.
func TestDownwardAPIFollowsMetadata(t *testing.T) {
	m, _ := newAPIManager(t, newFakeSources())
	pod := apiPod(corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
		Items: []corev1.DownwardAPIVolumeFile{fieldItem("labels", "metadata.labels"), fieldItem("annotations", "metadata.annotations")}}}})
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod.Labels["version"] = "v2"
	delete(pod.Annotations, "note")
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	got := readVolume(t, m.volumeDir(pod.UID, downwardAPIDir, "info"))
	if got["labels"] != "app=\"web\"\ntier=\"front\"\nversion=\"v2\"" || got["annotations"] != "" {
		t.Errorf("after the metadata change: %q", got)
	}
}

// A reader that resolves ..data once reads one whole set, never a mix of
// two writes, while the volume is rewritten under it.
func TestAtomicReaderNeverSeesAMix(t *testing.T) {
	src := newFakeSources()
	const files = 8
	version := func(v int) map[string]string {
		data := map[string]string{}
		for i := range files {
			data[fmt.Sprintf("k%d", i)] = fmt.Sprintf("version %d", v)
		}
		return data
	}
	src.setConfigMap("c", version(0))
	m, _ := newAPIManager(t, src)
	pod := apiPod(cmVolume("cfg", "c", nil, nil, nil))
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	dir := m.volumeDir(pod.UID, configMapDir, "cfg")

	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads, mixes atomic.Int32
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			d, err := os.Open(filepath.Join(dir, dataLink)) // ..data, resolved once
			if err != nil {
				readErr = err
				return
			}
			seen := map[string]bool{}
			complete := true
			for i := range files {
				data, err := readAt(d, fmt.Sprintf("k%d", i))
				if errors.Is(err, fs.ErrNotExist) {
					complete = false // the old set was removed meanwhile: nothing half-read
					break
				}
				if err != nil {
					readErr = err
					d.Close()
					return
				}
				seen[data] = true
			}
			d.Close()
			if complete {
				reads.Add(1)
				if len(seen) != 1 {
					mixes.Add(1)
				}
			}
		}
	}()
	for v := 1; v <= 50; v++ {
		src.setConfigMap("c", version(v))
		if _, err := m.Setup(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	// On a loaded machine the reader may not have finished a whole read
	// while the writes went on: it gets one more chance at the last set.
	for deadline := time.Now().Add(5 * time.Second); reads.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("reader: %v", readErr)
	}
	if reads.Load() == 0 || mixes.Load() > 0 {
		t.Errorf("%d whole reads, %d of them a mix of two writes; want some and none", reads.Load(), mixes.Load())
	}
	if got := readVolume(t, dir); got["k0"] != "version 50" || got["k7"] != "version 50" {
		t.Errorf("final content %v, want version 50", got)
	}
}

// readAt reads name in the directory d holds.
func readAt(d *os.File, name string) (string, error) {
	fd, err := syscall.Openat(int(d.Fd()), name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// A volume whose object is deleted keeps its last content, the pod's
// sync goes on, and that is logged once; once the object is back, the
// volume follows it again.
func TestDeletedObjectKeepsContent(t *testing.T) {
	src := newFakeSources()
	src.setConfigMap("c", map[string]string{"a": "1"})
	m, logs := newAPIManager(t, src)
	pod := apiPod(cmVolume("cfg", "c", nil, nil, nil))
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	dir := m.volumeDir(pod.UID, configMapDir, "cfg")
	src.setConfigMap("c", nil)
	for range 3 {
		mounts, err := m.Setup(context.Background(), pod)
		if err != nil {
			t.Fatalf("Setup after the delete: %v", err)
		}
		if len(mounts["app"]) != 1 || mounts["app"][0].HostPath != dir {
			t.Errorf("mounts = %+v", mounts)
		}
	}
	if got := readVolume(t, dir); got["a"] != "1" {
		t.Errorf("content after the delete = %v, want the last one", got)
	}
	if n := logs.count("keeps its last content"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.all())
	}
	src.setConfigMap("c", map[string]string{"a": "back"})
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := readVolume(t, dir); got["a"] != "back" {
		t.Errorf("content after the object came back = %v", got)
	}
	// A new pod referring to the deleted object does not start.
	src.setConfigMap("c", nil)
	other := apiPod(cmVolume("cfg", "c", nil, nil, nil))
	other.UID = "u2"
	cleanupPod(t, m, other)
	if _, err := m.Setup(context.Background(), other); err == nil {
		t.Error("a first Setup of a deleted object succeeded")
	}
}

// With an fsGroup, the files and directories are the group's: files gain
// its read bit, directories read, search and setgid, and a token is 0640
// rather than what defaultMode says. No secret byte reaches the log.
func TestAPIDataFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group to any group needs root")
	}
	src := testSources()
	m, logs := newAPIManager(t, src)
	pod := apiPod(
		secretVolume("s", "creds", []corev1.KeyToPath{{Key: "password", Path: "nested/pw"}}, ptr[int32](0o400), nil),
		corev1.Volume{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
	)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr[int64](4321)}
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	sdir := m.volumeDir(pod.UID, secretDir, "s")
	tdir := m.volumeDir(pod.UID, projectedDir, "tok")
	ts, _ := os.Readlink(filepath.Join(sdir, dataLink))
	for path, want := range map[string]os.FileMode{
		sdir:                                os.ModeDir | os.ModeSetgid | 0o755,
		filepath.Join(sdir, ts):             os.ModeDir | os.ModeSetgid | 0o755,
		filepath.Join(sdir, ts, "nested"):   os.ModeDir | os.ModeSetgid | 0o755,
		filepath.Join(sdir, "nested", "pw"): 0o440,
		filepath.Join(tdir, "token"):        0o640,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want || fileGID(fi) != 4321 {
			t.Errorf("%s: mode %v gid %d, want %v gid 4321", path, fi.Mode(), fileGID(fi), want)
		}
	}
	for _, link := range []string{filepath.Join(sdir, dataLink), filepath.Join(sdir, "nested")} {
		fi, err := os.Lstat(link)
		if err != nil {
			t.Fatal(err)
		}
		if fileGID(fi) != 4321 {
			t.Errorf("link %s has gid %d, want the fsGroup's 4321", link, fileGID(fi))
		}
	}
	// The host's other users do not reach the secrets: the kind directory is root's.
	if fi, err := os.Stat(filepath.Dir(sdir)); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("%s: %v, %v; want 0750", filepath.Dir(sdir), fi.Mode(), err)
	}
	// Unchanged at the next sync, ownership included.
	before, _ := os.Readlink(filepath.Join(sdir, dataLink))
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Readlink(filepath.Join(sdir, dataLink)); after != before {
		t.Error("an unchanged secret volume with an fsGroup was rewritten")
	}
	if all := logs.all(); strings.Contains(all, "hunter2") || strings.Contains(all, "tok-1") {
		t.Errorf("secret data in the log:\n%s", all)
	}
}

// A subPath of a configMap volume is a bind mount of the file itself, not
// of the link, and it keeps that file: through a deletion of the object
// and through an update, as the kubelet's subPaths do not update.
func TestAPIDataSubPathKeepsItsFile(t *testing.T) {
	needMounts(t)
	src := newFakeSources()
	src.setConfigMap("c", map[string]string{"app.conf": "v1"})
	m, _ := newAPIManager(t, src)
	pod := subPathPod(cmVolume("cfg", "c", nil, nil, nil), "app.conf")
	pod.UID = "u3"
	cleanupPod(t, m, pod)
	mounts, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	target := mounts["victim"][0].HostPath
	if !mounts["victim"][0].ReadOnly {
		t.Error("a configMap subPath is mounted read-write")
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "v1" {
		t.Fatalf("through the subPath: %q, %v", got, err)
	}
	dir := m.volumeDir(pod.UID, configMapDir, "cfg")
	ts, _ := os.Readlink(filepath.Join(dir, dataLink))
	if inodeOf(t, target) != inodeOf(t, filepath.Join(dir, ts, "app.conf")) {
		t.Error("the subPath mount is not of the file in the timestamped directory")
	}

	src.setConfigMap("c", nil)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatalf("Setup after the delete: %v", err)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "v1" {
		t.Errorf("after the delete: %q, %v; want v1", got, err)
	}
	src.setConfigMap("c", map[string]string{"app.conf": "v2"})
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := readVolume(t, dir)["app.conf"]; got != "v2" {
		t.Errorf("the volume reads %q, want v2", got)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "v1" {
		t.Errorf("the subPath after an update: %q, %v; want v1 still", got, err)
	}
	if n := len(mountsMentioning(t, target)); n != 1 {
		t.Errorf("%d mounts on %s, want 1", n, target)
	}
}

// Cleanup removes the pod's directory with these volumes, links and all.
func TestCleanupAPIDataVolumes(t *testing.T) {
	m, _ := newAPIManager(t, testSources())
	pod := apiPod(cmVolume("cfg", "app-config", nil, nil, nil), secretVolume("s", "creds", nil, nil, nil))
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := m.Cleanup(pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(m.PodDir(pod.UID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod dir after Cleanup: %v", err)
	}
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// BenchmarkSetupAPIData is a sync's Setup of a pod with a configMap
// volume of 10 keys of 1 KiB: unchanged (the resync of every sync) and
// changed every time (an atomic rewrite).
func BenchmarkSetupAPIData(b *testing.B) {
	for _, changed := range []bool{false, true} {
		b.Run(fmt.Sprintf("changed=%v", changed), func(b *testing.B) {
			src := newFakeSources()
			data := map[string]string{}
			for i := range 10 {
				data[fmt.Sprintf("k%d", i)] = strings.Repeat("x", 1024)
			}
			src.setConfigMap("c", data)
			m, err := New(Options{RootDir: b.TempDir(), Sources: src})
			if err != nil {
				b.Fatal(err)
			}
			pod := apiPod(cmVolume("cfg", "c", nil, nil, nil))
			defer m.Cleanup(pod.UID)
			n := 0
			for b.Loop() {
				if changed {
					n++
					data["k0"] = strconv.Itoa(n)
					src.setConfigMap("c", data)
				}
				if _, err := m.Setup(context.Background(), pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An optional object's files go when it is deleted, as the kubelet's do,
// while the volume's other sources stay current.
func TestOptionalObjectDeleted(t *testing.T) {
	src := newFakeSources()
	src.setConfigMap("opt", map[string]string{"o": "1"})
	src.setConfigMap("req", map[string]string{"r": "1"})
	m, _ := newAPIManager(t, src)
	pod := apiPod(corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "opt"}, Optional: ptr(true)}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "req"}}},
	}}}})
	cleanupPod(t, m, pod)
	dir := m.volumeDir(pod.UID, projectedDir, "p")
	for _, step := range []struct {
		opt, req map[string]string
		want     string
	}{
		{map[string]string{"o": "1"}, map[string]string{"r": "1"}, "map[o:1 r:1]"},
		{nil, map[string]string{"r": "1"}, "map[r:1]"},
		{nil, map[string]string{"r": "2"}, "map[r:2]"},
		{map[string]string{"o": "back"}, map[string]string{"r": "2"}, "map[o:back r:2]"},
	} {
		src.setConfigMap("opt", step.opt)
		src.setConfigMap("req", step.req)
		if _, err := m.Setup(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(readVolume(t, dir)); got != step.want {
			t.Errorf("volume = %s, want %s", got, step.want)
		}
	}
}
