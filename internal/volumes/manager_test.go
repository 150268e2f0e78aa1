package volumes

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

func newManager(t *testing.T) (*Manager, string) {
	t.Helper()
	root := t.TempDir()
	m, err := New(Options{RootDir: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	return m, root
}

func podWith(volumes []corev1.Volume, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec:       corev1.PodSpec{Volumes: volumes, Containers: containers},
	}
}

func hostPath(name, path string, typ corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &typ}}}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func TestSetupMounts(t *testing.T) {
	needMounts(t)
	m, root := newManager(t)
	host := filepath.Join(root, "host")
	pod := podWith(
		[]corev1.Volume{emptyDir("scratch"), hostPath("etc", host, corev1.HostPathDirectoryOrCreate)},
		corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{
			{Name: "scratch", MountPath: "/scratch"},
			{Name: "etc", MountPath: "/etc/app", ReadOnly: true, SubPath: "conf"},
		}},
		corev1.Container{Name: "idle"},
	)
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/out"}}}}

	mounts, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	scratch := filepath.Join(root, "state", "pods", "u1", "volumes", "kubernetes.io~empty-dir", "scratch")
	// The emptyDir is relabelled for SELinux at its first mount in the
	// pod (the init container's), the hostPath never.
	want := runtime.ContainerMounts{
		"init": {{ContainerPath: "/out", HostPath: scratch, SELinuxRelabel: true}},
		"app": {
			{ContainerPath: "/scratch", HostPath: scratch},
			{ContainerPath: "/etc/app", HostPath: filepath.Join(root, "state", "pods", "u1", "volume-subpaths", "etc", "app", "1"), ReadOnly: true},
		},
	}
	if diff := cmp.Diff(want, mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(scratch)
	if err != nil || fi.Mode().Perm() != 0o777 || !fi.IsDir() {
		t.Errorf("emptyDir %s: %v, mode %v; want a 0777 directory", scratch, err, fi.Mode())
	}
	if fi, err := os.Stat(filepath.Join(host, "conf")); err != nil || !fi.IsDir() {
		t.Errorf("subPath directory not created: %v", err)
	}
	// The subPath's mount point is a bind mount of it.
	if err := os.WriteFile(filepath.Join(host, "conf", "app.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mounts["app"][1].HostPath, "app.conf")); err != nil {
		t.Errorf("the subPath's file is not seen through its mount point: %v", err)
	}

	// Setup is idempotent, and Cleanup removes the pod's directory only.
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatalf("second Setup: %v", err)
	}
	if err := m.Cleanup(pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.PodDir(pod.UID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod dir after Cleanup: %v", err)
	}
	if _, err := os.Stat(filepath.Join(host, "conf", "app.conf")); err != nil {
		t.Errorf("hostPath after Cleanup: %v, want it kept with its content", err)
	}
}

func TestHostPathTypes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "dir")
	file := filepath.Join(root, "file")
	sock := filepath.Join(root, "sock")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := filepath.Join(root, "missing", "x")

	for _, tc := range []struct {
		typ     corev1.HostPathType
		path    string
		wantErr error
		created string // "dir" or "file"
	}{
		{typ: corev1.HostPathUnset, path: missing},
		{typ: corev1.HostPathDirectoryOrCreate, path: dir},
		{typ: corev1.HostPathDirectoryOrCreate, path: missing, created: "dir"},
		{typ: corev1.HostPathDirectoryOrCreate, path: file, wantErr: ErrHostPathType},
		{typ: corev1.HostPathDirectory, path: dir},
		{typ: corev1.HostPathDirectory, path: missing, wantErr: ErrHostPathType},
		{typ: corev1.HostPathDirectory, path: file, wantErr: ErrHostPathType},
		{typ: corev1.HostPathFileOrCreate, path: file},
		{typ: corev1.HostPathFileOrCreate, path: missing, created: "file"},
		{typ: corev1.HostPathFileOrCreate, path: dir, wantErr: ErrHostPathType},
		{typ: corev1.HostPathFile, path: file},
		{typ: corev1.HostPathFile, path: dir, wantErr: ErrHostPathType},
		{typ: corev1.HostPathSocket, path: sock},
		{typ: corev1.HostPathSocket, path: file, wantErr: ErrHostPathType},
		{typ: corev1.HostPathCharDev, path: "/dev/null"},
		{typ: corev1.HostPathBlockDev, path: "/dev/null", wantErr: ErrHostPathType},
		{typ: "Bogus", path: dir, wantErr: ErrUnsupportedVolume},
	} {
		t.Run(string(tc.typ)+" "+filepath.Base(tc.path), func(t *testing.T) {
			os.RemoveAll(filepath.Join(root, "missing"))
			got, err := checkHostPath("v", &corev1.HostPathVolumeSource{Path: tc.path, Type: &tc.typ})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got != tc.path {
				t.Errorf("path = %s, want %s", got, tc.path)
			}
			fi, statErr := os.Stat(tc.path)
			switch tc.created {
			case "dir":
				if statErr != nil || !fi.IsDir() {
					t.Errorf("directory not created: %v", statErr)
				}
			case "file":
				if statErr != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
					t.Errorf("file not created 0644: %v", statErr)
				}
			}
		})
	}
}

func TestSetupErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		wantErr error
	}{
		{"configMap volume", podWith([]corev1.Volume{{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}), ErrUnsupportedVolume},
		{"hugepages emptyDir", podWith([]corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}}}), ErrUnsupportedVolume},
		{"mount of an unknown volume", podWith(nil, corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}}}), ErrInvalidMount},
		{"subPath escaping the volume", podWith([]corev1.Volume{emptyDir("e")}, corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "e", MountPath: "/x", SubPath: "../../etc"}}}), ErrInvalidMount},
		{"absolute subPath", podWith([]corev1.Volume{emptyDir("e")}, corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "e", MountPath: "/x", SubPath: "/etc"}}}), ErrInvalidMount},
		{"emptyDir named to escape", podWith([]corev1.Volume{emptyDir("../../../../../escaped")}), ErrInvalidMount},
		{"UID with a slash", func() *corev1.Pod { p := podWith(nil); p.UID = "../x"; return p }(), ErrInvalidMount},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, root := newManager(t)
			if _, err := m.Setup(context.Background(), tc.pod); !errors.Is(err, tc.wantErr) {
				t.Errorf("Setup error = %v, want %v", err, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(root, "escaped")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a directory was made outside the pod's: %v", err)
			}
		})
	}
}

// A volumeMount's propagation passes through; recursiveReadOnly IfPossible
// is read-only (this node's runtime cannot make it recursive), Enabled is
// refused, naming the mount.
func TestResolveMountPropagationAndRecursiveReadOnly(t *testing.T) {
	paths := map[string]string{"v": "/host/v"}
	hostToContainer := corev1.MountPropagationHostToContainer
	ifPossible, enabled := corev1.RecursiveReadOnlyIfPossible, corev1.RecursiveReadOnlyEnabled
	m, err := resolveMount(paths, corev1.VolumeMount{Name: "v", MountPath: "/v", MountPropagation: &hostToContainer})
	if err != nil || m.Propagation != corev1.MountPropagationHostToContainer || m.ReadOnly {
		t.Errorf("HostToContainer: %+v, %v", m, err)
	}
	if m, err := resolveMount(paths, corev1.VolumeMount{Name: "v", MountPath: "/v"}); err != nil || m.Propagation != "" {
		t.Errorf("unset propagation: %+v, %v; want none", m, err)
	}
	if m, err := resolveMount(paths, corev1.VolumeMount{Name: "v", MountPath: "/v", ReadOnly: true, RecursiveReadOnly: &ifPossible}); err != nil || !m.ReadOnly {
		t.Errorf("recursiveReadOnly IfPossible: %+v, %v; want read-only", m, err)
	}
	_, err = resolveMount(paths, corev1.VolumeMount{Name: "v", MountPath: "/v", ReadOnly: true, RecursiveReadOnly: &enabled})
	if !errors.Is(err, ErrUnsupportedVolume) || !strings.Contains(err.Error(), "/v") || !strings.Contains(err.Error(), "recursiveReadOnly") {
		t.Errorf("recursiveReadOnly Enabled: %v, want refused naming the mount", err)
	}
}
