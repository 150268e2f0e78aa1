package nodeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/cri-client/pkg/logs"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeRuntime serves one pod's containers; its streams go to streamURL.
type fakeRuntime struct {
	mu        sync.Mutex
	status    runtime.PodStatus
	streamURL *url.URL
	logs      map[string]string // by container ID
	// removedLogs: the newest log left by a removed container, by name.
	removedLogs map[string]string
	execs       [][]string
	// forwarded are the ports of each port-forward asked for.
	forwarded [][]int32
	// logDir holds the pods' log directories; pods what GetPods lists.
	logDir string
	pods   []*runtime.Pod
}

func (f *fakeRuntime) GetPods(context.Context) ([]*runtime.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods, nil
}

// fakeImageFsUsed is what the fake runtime's images take.
const fakeImageFsUsed = 7 << 20

func (f *fakeRuntime) ImageFilesystem(context.Context) (runtime.ImageFs, error) {
	return runtime.ImageFs{Mountpoint: f.logDir, UsedBytes: fakeImageFsUsed}, nil
}

// fakePID is the process of every running container of the fake.
const fakePID = 4242

func (f *fakeRuntime) ContainerPID(_ context.Context, id string) (int, error) {
	if id != "app-2" {
		return 0, fmt.Errorf("container %s: not running", id)
	}
	return fakePID, nil
}

func (f *fakeRuntime) PodLogDir(pod *corev1.Pod) string {
	return filepath.Join(f.logDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID) (*runtime.PodStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if uid != f.status.ID {
		return &runtime.PodStatus{ID: uid}, nil
	}
	st := f.status
	return &st, nil
}

func (f *fakeRuntime) RunningContainerID(_ context.Context, uid types.UID, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.status.LatestContainer(name); uid == f.status.ID && c != nil && c.State == runtime.ContainerStateRunning {
		return c.ID, nil
	}
	return "", fmt.Errorf("pod %s: container %s: %w", uid, name, runtime.ErrNotRunning)
}

func (f *fakeRuntime) ExecURL(_ context.Context, id string, cmd []string, _ runtime.StreamOptions) (*url.URL, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs = append(f.execs, append([]string{id}, cmd...))
	return f.streamURL, nil
}

func (f *fakeRuntime) AttachURL(context.Context, string, runtime.StreamOptions) (*url.URL, error) {
	return f.streamURL, nil
}

func (f *fakeRuntime) PortForwardURL(_ context.Context, _ types.UID, ports []int32) (*url.URL, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forwarded = append(f.forwarded, ports)
	return f.streamURL, nil
}

func (f *fakeRuntime) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) (runtime.ExecResult, error) {
	return runtime.ExecResult{Stdout: []byte(id + ": " + strings.Join(cmd, " ") + "\n")}, nil
}

func (f *fakeRuntime) ReadLogs(_ context.Context, id string, _ *logs.LogOptions, stdout, _ io.Writer) error {
	f.mu.Lock()
	text, ok := f.logs[id]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("container %s: no log", id)
	}
	_, err := io.WriteString(stdout, text)
	return err
}

func (f *fakeRuntime) ReadRemovedLogs(_ context.Context, _ *corev1.Pod, container string, previous bool, _ *logs.LogOptions, stdout, _ io.Writer) error {
	text, ok := f.removedLogs[container]
	if !ok || previous {
		return runtime.ErrNoLog
	}
	_, err := io.WriteString(stdout, text)
	return err
}

func (f *fakeRuntime) ContainerStats(context.Context) ([]runtime.ContainerUsage, error) {
	at := time.Unix(1700000000, 0)
	return []runtime.ContainerUsage{
		{ID: "app-2", Name: "app", PodUID: "uid-1", PodName: "web", PodNamespace: "default",
			CPU: 1500 * time.Millisecond, CPUTime: at, HasCPU: true, MemoryWorkingSet: 1 << 20, MemoryTime: at, HasMemory: true,
			WritableLayer: 3 << 10},
		{ID: "side-1", Name: "side", PodUID: "uid-1", PodName: "web", PodNamespace: "default",
			CPU: 500 * time.Millisecond, CPUTime: at, HasCPU: true, MemoryWorkingSet: 1 << 20, MemoryTime: at, HasMemory: true},
	}, nil
}

// reviewer answers the server's TokenReviews and SubjectAccessReviews as
// an apiserver would: alice-token is alice, who may do anything with the
// node; bob-token is bob, who may do nothing.
type reviewer struct {
	mu           sync.Mutex
	tokenReviews int
	sars         []authzv1.ResourceAttributes
}

// client is a clientset whose apiserver is rv: the delegating
// authenticator and authorizer post their reviews over HTTP.
func (rv *reviewer) client(t *testing.T) kubernetes.Interface {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(rv.serve))
	t.Cleanup(api.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (rv *reviewer) serve(w http.ResponseWriter, r *http.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authnv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rv.tokenReviews++
		if name, ok := strings.CutSuffix(tr.Spec.Token, "-token"); ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: name}}
		}
		_ = json.NewEncoder(w).Encode(&tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authzv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil || sar.Spec.ResourceAttributes == nil {
			http.Error(w, fmt.Sprintf("%v", err), http.StatusBadRequest)
			return
		}
		rv.sars = append(rv.sars, *sar.Spec.ResourceAttributes)
		sar.Status.Allowed = sar.Spec.User == "alice" || sar.Spec.User == "carol"
		_ = json.NewEncoder(w).Encode(&sar)
	default:
		http.NotFound(w, r)
	}
}
