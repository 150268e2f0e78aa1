package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/cgroups"
)

// recorder is cri-api's fake runtime, recording the configs and stop
// timeouts it is given, which the fake itself does not keep.
type recorder struct {
	*critest.FakeRuntimeService

	mu         sync.Mutex
	sandboxes  []*runtimeapi.PodSandboxConfig
	handlers   []string // of the sandboxes, in order
	containers []*runtimeapi.ContainerConfig
	stops      map[string]int64 // container ID -> timeout
	// stopGate, if set, is called by every StopContainer before it stops.
	stopGate func(id string) error
}

func (r *recorder) RunPodSandbox(ctx context.Context, c *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	r.mu.Lock()
	r.sandboxes = append(r.sandboxes, c)
	r.handlers = append(r.handlers, handler)
	r.mu.Unlock()
	return r.FakeRuntimeService.RunPodSandbox(ctx, c, handler)
}

func (r *recorder) CreateContainer(ctx context.Context, sb string, c *runtimeapi.ContainerConfig, sc *runtimeapi.PodSandboxConfig) (string, error) {
	r.mu.Lock()
	r.containers = append(r.containers, c)
	r.mu.Unlock()
	return r.FakeRuntimeService.CreateContainer(ctx, sb, c, sc)
}

func (r *recorder) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.mu.Lock()
	r.stops[id] = timeout
	gate := r.stopGate
	r.mu.Unlock()
	if gate != nil {
		if err := gate(id); err != nil {
			return err
		}
	}
	return r.FakeRuntimeService.StopContainer(ctx, id, timeout)
}

// world is a Runtime over the fake CRI services with a fake clock.
type world struct {
	t        *testing.T
	rt       *Runtime
	cri      *recorder
	images   *critest.FakeImageService
	clock    *testingclock.FakeClock
	logRoot  string
	cgroupFS string
	// hooks are what the world's syncs pass to SyncPod.
	hooks SyncHooks
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{
		t:        t,
		cri:      &recorder{FakeRuntimeService: critest.NewFakeRuntimeService(), stops: map[string]int64{}},
		images:   critest.NewFakeImageService(),
		clock:    testingclock.NewFakeClock(time.Now()), // the fake CRI stamps objects with time.Now
		logRoot:  filepath.Join(dir, "logs"),
		cgroupFS: filepath.Join(dir, "cgroup"),
	}
	w.images.SetFakeImages([]string{"busybox:1", "busybox:2"})
	w.rt = w.newRuntime()
	return w
}

// newRuntime returns another Runtime over the same fake runtime, as a
// restarted agent would have.
func (w *world) newRuntime() *Runtime {
	return newRuntime(Options{
		Endpoint: "unix:///fake.sock",
		LogRoot:  w.logRoot,
		Cgroups:  testCgroups(w.cgroupFS),
		Logger:   testr.New(w.t),
		Clock:    w.clock,
	}, w.cri, w.images)
}

// sync fetches the pod's status and syncs it once.
func (w *world) sync(pod *corev1.Pod, mounts ContainerMounts) (SyncResult, error) {
	w.t.Helper()
	ctx := context.Background()
	st, err := w.rt.GetPodStatus(ctx, pod.UID)
	if err != nil {
		w.t.Fatalf("GetPodStatus: %v", err)
	}
	return w.rt.SyncPod(ctx, pod, mounts, st, w.hooks)
}

// mustSync syncs and fails the test on an error.
func (w *world) mustSync(pod *corev1.Pod) SyncResult {
	w.t.Helper()
	res, err := w.sync(pod, nil)
	if err != nil {
		w.t.Fatalf("SyncPod: %v", err)
	}
	return res
}

// calls returns the CRI calls since the last call of calls, without the
// read-only ones.
func (w *world) calls() []string {
	w.cri.Lock()
	all := w.cri.Called
	w.cri.Called = nil
	w.cri.Unlock()
	return slices.DeleteFunc(slices.Clone(all), func(c string) bool {
		switch c {
		case "ListPodSandbox", "ListContainers", "PodSandboxStatus", "ContainerStatus":
			return true
		}
		return false
	})
}

// exit makes a container exit with code after running ranFor, finishing
// at the fake clock's now.
func (w *world) exit(id string, code int32, ranFor time.Duration) {
	w.t.Helper()
	w.cri.Lock()
	defer w.cri.Unlock()
	c, ok := w.cri.Containers[id]
	if !ok {
		w.t.Fatalf("no container %s", id)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.ExitCode = code
	c.FinishedAt = w.clock.Now().UnixNano()
	c.StartedAt = w.clock.Now().Add(-ranFor).UnixNano()
}

// containerID returns the ID of the newest instance of the named container.
func (w *world) containerID(uid, name string) string {
	w.t.Helper()
	st, err := w.rt.GetPodStatus(context.Background(), types.UID(uid))
	if err != nil {
		w.t.Fatal(err)
	}
	c := st.LatestContainer(name)
	if c == nil {
		w.t.Fatalf("pod %s has no container %s", uid, name)
	}
	return c.ID
}

// lastContainerConfig returns the newest CreateContainer config.
func (w *world) lastContainerConfig() *runtimeapi.ContainerConfig {
	w.cri.mu.Lock()
	defer w.cri.mu.Unlock()
	if len(w.cri.containers) == 0 {
		w.t.Fatal("no container was created")
	}
	return w.cri.containers[len(w.cri.containers)-1]
}

// makeCgroups creates the cgroup v1 directories containerd would leave,
// in the QoS tree and in the flat layout of earlier versions.
func (w *world) makeCgroups(uid string) []string {
	w.t.Helper()
	var dirs []string
	for _, h := range []string{"cpu,cpuacct", "memory", "pids"} {
		for _, parent := range []string{"nodeagent/kubepods/besteffort", "nodeagent"} {
			d := filepath.Join(w.cgroupFS, h, parent, "pod"+uid)
			if err := os.MkdirAll(filepath.Join(d, "container1"), 0o755); err != nil {
				w.t.Fatal(err)
			}
			dirs = append(dirs, d)
		}
	}
	// cpu is a link to cpu,cpuacct, as on a real host.
	if err := os.Symlink("cpu,cpuacct", filepath.Join(w.cgroupFS, "cpu")); err != nil {
		w.t.Fatal(err)
	}
	return dirs
}

// testCgroups keeps pods' cgroups under the mount point fs.
func testCgroups(fs string) *cgroups.Manager {
	m, err := cgroups.New(cgroups.Options{FS: fs})
	if err != nil {
		panic(err) // cgroupfs is never refused
	}
	return m
}
