package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Each instance gets a new, empty, world-writable file under the pod's
// directory, mounted at the container's terminationMessagePath.
func TestTerminationMessageMount(t *testing.T) {
	pods := t.TempDir()
	r := newRuntime(Options{PodsDir: pods}, nil, nil)
	pod := newPod()
	c := &pod.Spec.Containers[0]
	c.TerminationMessagePath = "/dev/termination-log"
	first, err := r.terminationMessageMount(pod, c)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.terminationMessageMount(pod, c)
	if err != nil {
		t.Fatal(err)
	}
	if first.ContainerPath != "/dev/termination-log" || first.ReadOnly {
		t.Errorf("mount = %+v, want a writable mount at /dev/termination-log", first)
	}
	if first.HostPath == second.HostPath {
		t.Errorf("two instances share %s", first.HostPath)
	}
	if dir := filepath.Join(pods, "u1", "containers", "app"); filepath.Dir(first.HostPath) != dir {
		t.Errorf("file %s, want it in %s", first.HostPath, dir)
	}
	fi, err := os.Stat(first.HostPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o666 || fi.Size() != 0 {
		t.Errorf("file mode %v size %d, want -rw-rw-rw- and empty", fi.Mode(), fi.Size())
	}

	c.TerminationMessagePath = ""
	if m, err := r.terminationMessageMount(pod, c); m != nil || err != nil {
		t.Errorf("no terminationMessagePath: %v, %v; want no mount", m, err)
	}
	if m, err := newRuntime(Options{}, nil, nil).terminationMessageMount(pod, &pod.Spec.Containers[0]); m != nil || err != nil {
		t.Errorf("no PodsDir: %v, %v; want no mount", m, err)
	}
}

// criLog writes lines as containerd writes a container's log.
func criLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("2026-01-02T03:04:05.000000000Z " + l + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTerminationMessage(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("stdout F line %d", i)
	}
	var wantLast80 strings.Builder
	for i := 20; i < 100; i++ {
		fmt.Fprintf(&wantLast80, "line %d\n", i)
	}
	long := make([]string, 50)
	for i := range long {
		long[i] = "stderr F " + strings.Repeat(string(rune('a'+i%26)), 99)
	}
	var allLong strings.Builder
	for i := range long {
		allLong.WriteString(strings.Repeat(string(rune('a'+i%26)), 99) + "\n")
	}
	fallback, file := string(corev1.TerminationMessageFallbackToLogsOnError), string(corev1.TerminationMessageReadFile)
	for _, tc := range []struct {
		name     string
		policy   string
		file     *string // nil: no file
		log      []string
		exitCode int32
		reason   string
		outside  bool // the mount's host path is not under PodsDir
		want     string
	}{
		{name: "the file", policy: file, file: new("done: 42 widgets"), exitCode: 0, want: "done: 42 widgets"},
		{name: "the file on failure too", policy: fallback, file: new("bad input"), log: []string{"stdout F from the log"}, exitCode: 1, want: "bad input"},
		{name: "the file's last 4 KiB", policy: file, file: new(strings.Repeat("x", 5000) + "END"), want: strings.Repeat("x", 4096-3) + "END"},
		{name: "an empty file, File policy", policy: file, file: new(""), log: []string{"stdout F boom"}, exitCode: 1, want: ""},
		{name: "empty file, fallback, failed", policy: fallback, file: new(""), log: []string{"stdout F boom", "stderr F trace"}, exitCode: 2, want: "boom\ntrace\n"},
		{name: "missing file, fallback, failed", policy: fallback, log: []string{"stdout F boom"}, exitCode: 2, want: "boom\n"},
		{name: "fallback but exit 0", policy: fallback, file: new(""), log: []string{"stdout F fine"}, exitCode: 0, want: ""},
		{name: "fallback but it could not run", policy: fallback, file: new(""), log: []string{"stdout F x"}, exitCode: 128, reason: "ContainerCannotRun", want: ""},
		{name: "fallback: the last 80 lines", policy: fallback, file: new(""), log: many, exitCode: 1, want: wantLast80.String()},
		{name: "fallback: at most 2 KiB", policy: fallback, file: new(""), log: long, exitCode: 1, want: allLong.String()[allLong.Len()-2048:]},
		{name: "fallback: partial lines joined", policy: fallback, file: new(""), exitCode: 1,
			log: []string{"stdout P part one, ", "stdout F part two", "stdout F "}, want: "part one, part two\n\n"},
		{name: "fallback: unparsable lines skipped", policy: fallback, file: new(""), exitCode: 1,
			log: []string{"garbage", "stdout F kept"}, want: "kept\n"},
		{name: "a host path outside PodsDir is not read", policy: file, file: new("secret"), outside: true, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			pods, logs := filepath.Join(root, "pods"), filepath.Join(root, "logs")
			r := newRuntime(Options{PodsDir: pods, LogRoot: logs}, nil, nil)
			host := filepath.Join(pods, "u1", "containers", "app", "0000abcd")
			if tc.outside {
				host = filepath.Join(root, "elsewhere")
			}
			if tc.file != nil {
				if err := os.MkdirAll(filepath.Dir(host), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(host, []byte(*tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			logPath := filepath.Join(logs, "default_web_u1", "app", "0.log")
			if tc.log != nil {
				criLog(t, logPath, tc.log...)
			}
			s := &runtimeapi.ContainerStatus{
				State:    runtimeapi.ContainerState_CONTAINER_EXITED,
				ExitCode: tc.exitCode,
				Reason:   tc.reason,
				Annotations: map[string]string{
					AnnotationTerminationMessagePath:   "/dev/termination-log",
					AnnotationTerminationMessagePolicy: tc.policy,
				},
				Mounts:  []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: "/x"}, {ContainerPath: "/dev/termination-log", HostPath: host}},
				LogPath: logPath,
			}
			if got := r.terminationMessage(s); got != tc.want {
				t.Errorf("message = %q, want %q", got, tc.want)
			}
		})
	}
}
