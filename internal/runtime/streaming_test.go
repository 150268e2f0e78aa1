package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/logs"
)

// streamer answers every streaming request with a URL of its own.
type streamer struct {
	*recorder
	url  string
	reqs []any
}

func (s *streamer) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	s.reqs = append(s.reqs, req)
	return &runtimeapi.ExecResponse{Url: s.url}, nil
}

func (s *streamer) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	s.reqs = append(s.reqs, req)
	return &runtimeapi.AttachResponse{Url: s.url}, nil
}

func (s *streamer) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	s.reqs = append(s.reqs, req)
	return &runtimeapi.PortForwardResponse{Url: s.url}, nil
}

func TestStreamURLs(t *testing.T) {
	w, pod, st := syncedPod(t)
	app := st.LatestContainer("app")
	s := &streamer{recorder: w.cri, url: "http://127.0.0.1:4444/exec/abc"}
	rt := newRuntime(Options{Endpoint: "unix:///fake.sock", LogRoot: w.logRoot, Cgroups: testCgroups(w.cgroupFS), Logger: testr.New(t), Clock: w.clock}, s, w.images)
	ctx := context.Background()

	u, err := rt.ExecURL(ctx, app.ID, []string{"sh", "-c", "true"}, StreamOptions{Stdin: true, Stdout: true, TTY: true})
	if err != nil || u.String() != s.url {
		t.Fatalf("ExecURL: %v %v", u, err)
	}
	exec := s.reqs[0].(*runtimeapi.ExecRequest)
	if exec.GetContainerId() != app.ID || strings.Join(exec.GetCmd(), " ") != "sh -c true" || !exec.GetStdin() || !exec.GetStdout() || exec.GetStderr() || !exec.GetTty() {
		t.Errorf("exec request %v", exec)
	}
	if _, err := rt.AttachURL(ctx, app.ID, StreamOptions{Stdout: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.PortForwardURL(ctx, pod.UID, []int32{8080, 9090}); err != nil {
		t.Fatal(err)
	}
	if pf := s.reqs[2].(*runtimeapi.PortForwardRequest); pf.GetPodSandboxId() != st.Sandboxes[0].ID || !slices.Equal(pf.GetPort(), []int32{8080, 9090}) {
		t.Errorf("port-forward into sandbox %q, ports %v; want %q, [8080 9090]", pf.GetPodSandboxId(), pf.GetPort(), st.Sandboxes[0].ID)
	}
	if _, err := rt.PortForwardURL(ctx, "no-such-pod", nil); !errors.Is(err, ErrNotRunning) {
		t.Errorf("port-forward into a pod the runtime does not hold: %v, want ErrNotRunning", err)
	}
	s.url = "/exec/relative"
	if _, err := rt.ExecURL(ctx, app.ID, []string{"true"}, StreamOptions{Stdout: true}); err == nil || !strings.Contains(err.Error(), "not an absolute") {
		t.Errorf("a relative URL: %v", err)
	}
}

func TestRunningContainerID(t *testing.T) {
	w, pod, st := syncedPod(t)
	app := st.LatestContainer("app")
	ctx := context.Background()
	w.cri.Lock()
	w.cri.Called = nil
	w.cri.Unlock()
	id, err := w.rt.RunningContainerID(ctx, pod.UID, "app")
	if err != nil || id != app.ID {
		t.Fatalf("RunningContainerID(app) = %q, %v; want %q", id, err, app.ID)
	}
	if err := w.cri.AssertCalls([]string{"ListContainers"}); err != nil {
		t.Errorf("a lookup of one list call: %v", err)
	}
	if _, err := w.rt.RunningContainerID(ctx, pod.UID, "no-such-container"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("a name the pod has no container of: %v, want ErrNotRunning", err)
	}
	if _, err := w.rt.RunningContainerID(ctx, "another-pod", "app"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("another pod's container of that name: %v, want ErrNotRunning", err)
	}
	w.exit(app.ID, 0, time.Second)
	if _, err := w.rt.RunningContainerID(ctx, pod.UID, "app"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("an exited container: %v, want ErrNotRunning", err)
	}
}

func TestReadLogs(t *testing.T) {
	w, _, st := syncedPod(t)
	id := st.LatestContainer("app").ID
	path := filepath.Join(t.TempDir(), "0.log")
	lines := "2026-01-02T03:04:05.000000001Z stdout F one\n" +
		"2026-01-02T03:04:06.000000001Z stderr P tw\n" +
		"2026-01-02T03:04:06.000000002Z stderr F o\n" +
		"2026-01-02T03:04:07.000000001Z stdout F three\n"
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	w.cri.Lock()
	w.cri.Containers[id].LogPath = path
	w.cri.Unlock()

	var all, stdout strings.Builder
	if err := w.rt.ReadLogs(context.Background(), id, &logs.LogOptions{}, &all, &all); err != nil {
		t.Fatal(err)
	}
	if all.String() != "one\ntwo\nthree\n" {
		t.Errorf("log %q", all.String())
	}
	// The streams apart; tailLines counts the file's lines, parts of a
	// longer line included, as the kubelet's reader does.
	var stderr strings.Builder
	if err := w.rt.ReadLogs(context.Background(), id, &logs.LogOptions{TailLines: ptr(int64(3))}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "three\n" || stderr.String() != "two\n" {
		t.Errorf("tail 3: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if err := w.rt.ReadLogs(context.Background(), "nope", &logs.LogOptions{}, &all, &all); err == nil {
		t.Error("the log of an unknown container: no error")
	}
}

// syncedPod is a world with the default pod synced, and its status.
func syncedPod(t *testing.T) (*world, *corev1.Pod, *PodStatus) {
	t.Helper()
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	st, err := w.rt.GetPodStatus(context.Background(), pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	return w, pod, st
}
