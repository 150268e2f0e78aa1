package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// fakeAgent is a localapi.Provider whose pods the test sets; the real
// local API server serves them on a socket.
type fakeAgent struct {
	mu   sync.Mutex
	pods []localapi.PodInfo
}

func (f *fakeAgent) set(pods ...localapi.PodInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func (f *fakeAgent) Pods() []localapi.PodInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]localapi.PodInfo(nil), f.pods...)
}
func (f *fakeAgent) Timeline(types.UID) []localapi.TimelineEntry { return nil }
func (f *fakeAgent) FileErrors() map[string]error                { return nil }
func (f *fakeAgent) HTTPError() (string, error)                  { return "", nil }
func (f *fakeAgent) Ready() error                                { return nil }
func (f *fakeAgent) Problems() []string                          { return nil }

// serve runs the local API over fake on a socket until the test ends.
func serve(t *testing.T, fake *fakeAgent) *localapi.Client {
	t.Helper()
	c, _ := serveAt(t, fake)
	return c
}

func serveAt(t *testing.T, fake *fakeAgent) (*localapi.Client, string) {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "mctl")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(sockDir, "api.sock")
	srv, err := localapi.New(localapi.Options{SocketPath: socket, Provider: fake})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		os.RemoveAll(sockDir)
	})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := connect(context.Background(), socket); err == nil {
			t.Cleanup(c.Close)
			return c, socket
		} else if time.Now().After(deadline) {
			t.Fatalf("the local API did not answer: %v", err)
		}
	}
}

func wanted(uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1ObjectMeta("web-"+testNode, uid), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
}

func info(uid string, phase corev1.PodPhase, cs ...corev1.ContainerStatus) localapi.PodInfo {
	p := wanted(uid)
	return localapi.PodInfo{Pod: p, WorkerPhase: "sync", Status: corev1.PodStatus{Phase: phase, ContainerStatuses: cs}}
}

func running(id string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "c", ContainerID: id, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func exited(code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "c", ContainerID: "containerd://x", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}
}

func TestWaitRunningFollowsTheAgent(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	var out bytes.Buffer
	c := &cli{out: &out, errOut: &out, settings: settings{PodLogDir: t.TempDir()}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// The old generation runs; the new one appears, pending, then running.
	fake.set(info("old", corev1.PodRunning, running("containerd://old")))
	go func() {
		time.Sleep(50 * time.Millisecond)
		fake.set(info("new", corev1.PodPending))
		time.Sleep(50 * time.Millisecond)
		fake.set(info("new", corev1.PodRunning, running("containerd://new")))
	}()
	start := time.Now()
	if err := c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("new")}, settle{watched: time.Hour, unwatched: 100 * time.Millisecond}); err != nil {
		t.Fatalf("waitRunning: %v", err)
	}
	// 100 ms before it runs, 100 ms of settling.
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("waitRunning returned after %v, before the container had settled", d)
	}
	if !strings.Contains(out.String(), "pod/web-"+testNode+" running (uid new)") {
		t.Errorf("output %q", out.String())
	}
}

func TestWaitRunningReportsAFailureWithTheLog(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	logs := t.TempDir()
	dir := filepath.Join(podLogDir(logs, "default", "web-"+testNode, "new"), "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "0.log"), []byte("2026-01-01T00:00:00Z stderr F cannot open /etc/app.conf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{out: &out, errOut: &out, settings: settings{PodLogDir: logs}}
	fake.set(info("new", corev1.PodRunning, exited(1)))
	err := c.waitRunning(context.Background(), client, "/m/web.yaml", []*corev1.Pod{wanted("new")}, settle{})
	var pf *podFailed
	if !errors.As(err, &pf) || !strings.Contains(err.Error(), "container c exited with code 1") || !strings.Contains(err.Error(), "cannot open /etc/app.conf") {
		t.Errorf("waitRunning: %v, want the exit code and the log line", err)
	}
}

func TestWaitRunningTimesOutSayingWhy(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	c := &cli{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	fake.set(info("new", corev1.PodPending))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("new"), wanted("absent")}, settle{})
	if err == nil || !strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), "still Pending") || !strings.Contains(err.Error(), "not seen by the agent") {
		t.Errorf("waitRunning: %v", err)
	}
}

func TestWaitGone(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	var out bytes.Buffer
	c := &cli{out: &out, errOut: &out}
	terminating := info("u", corev1.PodRunning)
	terminating.WorkerPhase = "terminating"
	fake.set(terminating)
	go func() {
		time.Sleep(50 * time.Millisecond)
		fake.set()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.waitGone(ctx, client, map[types.UID]string{"u": "web-" + testNode}); err != nil || !strings.Contains(out.String(), "gone") {
		t.Errorf("waitGone: %v, %q", err, out.String())
	}
}

// A running container whose process the agent watches settles after the
// watched settle; one whose process exited is not running, whatever the
// settle: the wait ends when the runtime records how it ended.
func TestWaitRunningFollowsTheAgentsExitWatch(t *testing.T) {
	fake := &fakeAgent{}
	client := serve(t, fake)
	var out bytes.Buffer
	c := &cli{out: &out, errOut: &out, settings: settings{PodLogDir: t.TempDir()}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	watched := info("new", corev1.PodRunning, running("containerd://new"))
	watched.Processes = map[string]string{"containerd://new": localapi.ProcessWatched}
	fake.set(watched)
	start := time.Now()
	if err := c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("new")}, settle{watched: 100 * time.Millisecond, unwatched: time.Hour}); err != nil {
		t.Fatalf("waitRunning of a watched container: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("waitRunning returned after %v, before the watched settle of 100ms", d)
	}

	// Watched once, then running with no process (the runtime recorded
	// the exit; the agent's status has not caught up): not running yet.
	lost := info("lost", corev1.PodRunning, running("containerd://lost"))
	lost.Processes = map[string]string{"containerd://lost": localapi.ProcessWatched}
	fake.set(lost)
	go func() {
		time.Sleep(20 * time.Millisecond)
		fake.set(info("lost", corev1.PodRunning, running("containerd://lost")))
		time.Sleep(100 * time.Millisecond)
		fake.set(info("lost", corev1.PodRunning, exited(2)))
	}()
	err := c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("lost")}, settle{watched: 50 * time.Millisecond, unwatched: time.Hour})
	if !strings.Contains(fmt.Sprint(err), "exited with code 2") {
		t.Fatalf("waitRunning of a container whose watch ended: %v, want it failed with code 2", err)
	}

	gone := info("crash", corev1.PodRunning, running("containerd://crash"))
	gone.Processes = map[string]string{"containerd://crash": localapi.ProcessExited}
	fake.set(gone)
	go func() {
		time.Sleep(100 * time.Millisecond)
		fake.set(info("crash", corev1.PodRunning, exited(1)))
	}()
	err = c.waitRunning(ctx, client, "/m/web.yaml", []*corev1.Pod{wanted("crash")}, settle{})
	var failed *podFailed
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "exited with code 1") {
		t.Fatalf("waitRunning of a container whose process exited: %v, want it failed with code 1", err)
	}
}
