package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeRuntime stands in for containerd behind the Runtime interface. It
// keeps pods as the real runtime lists them and plans like it in the small:
// a missing sandbox is created, a container missing or of another spec
// hash is (re)started, an exited one restarts under restartPolicy Always.
type fakeRuntime struct {
	logRoot string

	mu   sync.Mutex
	pods map[types.UID]*fakePod
	seq  int
	// exitCodes makes containers of these names exit at once with the code.
	exitCodes map[string]int32
	// execFails makes exec probes of containers of these names exit 1.
	execFails map[string]bool
	// stops are the containers StopContainer stopped, with their grace.
	stops []containerStop
	// killGate, if set, holds every KillPod until it is closed.
	killGate chan struct{}
	kills    []killCall
	syncs    []syncCall
	gcs      int
}

type fakePod struct {
	name, namespace string
	sandboxes       []runtime.SandboxStatus   // newest first
	containers      []runtime.ContainerStatus // newest first
	running         map[string]bool           // container IDs that run
}

type killCall struct {
	UID   types.UID
	Grace *int64 // nil: from the containers' annotations
	Spec  bool   // a pod spec was given
	Stop  bool   // StopPod: containers and sandboxes stopped, nothing removed
}

type syncCall struct {
	UID types.UID
	// Observed is how many containers the status given to SyncPod held.
	Observed int
	Actions  []runtime.ActionKind
	// CPU is the cpu request of the pod's first container, as given.
	CPU string
}

type containerStop struct {
	Name  string
	Grace int64
}

func newFakeRuntime(logRoot string) *fakeRuntime {
	return &fakeRuntime{logRoot: logRoot, pods: map[types.UID]*fakePod{}, exitCodes: map[string]int32{}, execFails: map[string]bool{}}
}

// ExecSync answers with exit code 1 for a container named in execFails,
// 0 otherwise.
func (f *fakeRuntime) ExecSync(_ context.Context, id string, _ []string, _ time.Duration) (runtime.ExecResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pods {
		for _, c := range p.containers {
			if c.ID == id && f.execFails[c.Name] {
				return runtime.ExecResult{ExitCode: 1, Stdout: []byte("not yet")}, nil
			}
		}
	}
	return runtime.ExecResult{}, nil
}

func (f *fakeRuntime) setExecFails(name string, fails bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execFails[name] = fails
}

// StopContainer makes a running container exit with code 137.
func (f *fakeRuntime) StopContainer(_ context.Context, id string, grace int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pods {
		for i := range p.containers {
			c := &p.containers[i]
			if c.ID == id && c.State == runtime.ContainerStateRunning {
				c.State, c.ExitCode, c.FinishedAt = runtime.ContainerStateExited, 137, time.Now()
				delete(p.running, id)
				f.stops = append(f.stops, containerStop{Name: c.Name, Grace: grace})
			}
		}
	}
	return nil
}

func (f *fakeRuntime) containerStops() []containerStop {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stops)
}

func (f *fakeRuntime) nextID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%04d", prefix, f.seq)
}

// seed puts a running pod into the runtime, as a previous agent left it.
func (f *fakeRuntime) seed(pod *corev1.Pod) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &fakePod{name: pod.Name, namespace: pod.Namespace, running: map[string]bool{}}
	f.pods[pod.UID] = p
	now := time.Now()
	p.sandboxes = []runtime.SandboxStatus{{ID: f.nextID("sb"), State: runtime.SandboxReady, IP: "10.0.0.9", CreatedAt: now}}
	var ids []string
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		id := f.nextID("c")
		p.containers = append(p.containers, runtime.ContainerStatus{ID: id, Name: c.Name, SandboxID: p.sandboxes[0].ID,
			State: runtime.ContainerStateRunning, CreatedAt: now, StartedAt: now, Image: c.Image, Hash: runtime.HashContainer(c)})
		p.running[id] = true
		ids = append(ids, id)
	}
	return ids
}

// SyncPod runs the postStart hooks after the starts, off the fake's lock:
// the hooks exec and stop through it. The real order, each hook before
// the next start, is internal/runtime's to test.
func (f *fakeRuntime) SyncPod(ctx context.Context, pod *corev1.Pod, _ runtime.ContainerMounts, status *runtime.PodStatus, hooks runtime.SyncHooks) (runtime.SyncResult, error) {
	res, err := f.syncPod(pod, status)
	for _, a := range res.Actions {
		c := podContainer(pod, a.Container)
		if a.Kind == runtime.ActionStartContainer && c != nil && c.Lifecycle != nil && c.Lifecycle.PostStart != nil && hooks.PostStart != nil {
			_ = hooks.PostStart(ctx, c, a.ID, []string{"10.0.0.9"})
		}
	}
	return res, err
}

func (f *fakeRuntime) syncPod(pod *corev1.Pod, status *runtime.PodStatus) (runtime.SyncResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := syncCall{UID: pod.UID}
	if len(pod.Spec.Containers) > 0 {
		call.CPU = pod.Spec.Containers[0].Resources.Requests.Cpu().String()
	}
	if status != nil {
		call.Observed = len(status.Containers)
	}
	var res runtime.SyncResult
	act := func(a runtime.Action) {
		res.Actions = append(res.Actions, a)
		call.Actions = append(call.Actions, a.Kind)
	}
	defer func() { f.syncs = append(f.syncs, call) }()

	p, ok := f.pods[pod.UID]
	if !ok {
		p = &fakePod{name: pod.Name, namespace: pod.Namespace, running: map[string]bool{}}
		f.pods[pod.UID] = p
	}
	now := time.Now()
	if len(p.sandboxes) == 0 || p.sandboxes[0].State != runtime.SandboxReady {
		sb := runtime.SandboxStatus{ID: f.nextID("sb"), State: runtime.SandboxReady, IP: "10.0.0.9", CreatedAt: now}
		p.sandboxes = append([]runtime.SandboxStatus{sb}, p.sandboxes...)
		act(runtime.Action{Kind: runtime.ActionCreateSandbox, ID: sb.ID})
	}
	done := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		hash := runtime.HashContainer(c)
		var latest *runtime.ContainerStatus
		for j := range p.containers {
			if p.containers[j].Name == c.Name {
				latest = &p.containers[j]
				break
			}
		}
		restarts := 0
		switch {
		case latest == nil:
		case latest.State == runtime.ContainerStateRunning && latest.Hash == hash:
			continue
		case latest.State == runtime.ContainerStateRunning:
			latest.State, latest.FinishedAt, latest.ExitCode = runtime.ContainerStateExited, now, 137
			delete(p.running, latest.ID)
			act(runtime.Action{Kind: runtime.ActionKillContainer, Container: c.Name, ID: latest.ID, Reason: "spec changed"})
			restarts = latest.RestartCount + 1
		case pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || latest.Hash != hash:
			restarts = latest.RestartCount + 1
		default:
			done++
			continue
		}
		cs := runtime.ContainerStatus{ID: f.nextID("c"), Name: c.Name, SandboxID: p.sandboxes[0].ID, State: runtime.ContainerStateRunning,
			CreatedAt: now, StartedAt: now, Image: c.Image, Hash: hash, RestartCount: restarts}
		if code, ok := f.exitCodes[c.Name]; ok {
			cs.State, cs.ExitCode, cs.FinishedAt = runtime.ContainerStateExited, code, now
		} else {
			p.running[cs.ID] = true
		}
		p.containers = append([]runtime.ContainerStatus{cs}, p.containers...)
		act(runtime.Action{Kind: runtime.ActionStartContainer, Container: c.Name, ID: cs.ID})
	}
	if done == len(pod.Spec.Containers) && pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		res.Terminal = true
	}
	return res, nil
}

func (f *fakeRuntime) KillPod(ctx context.Context, pod *corev1.Pod, running runtime.Pod, grace *int64) error {
	if err := f.kill(ctx, killCall{UID: running.ID, Spec: pod != nil}, grace); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pods, running.ID)
	return nil
}

func (f *fakeRuntime) StopPod(ctx context.Context, pod *corev1.Pod, running runtime.Pod, grace *int64, _ runtime.PreStopHook) error {
	if err := f.kill(ctx, killCall{UID: running.ID, Spec: pod != nil, Stop: true}, grace); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.pods[running.ID]; ok {
		clear(p.running)
		for i := range p.sandboxes {
			p.sandboxes[i].State = runtime.SandboxNotReady
		}
	}
	return nil
}

// kill records a call and waits at killGate, if set.
func (f *fakeRuntime) kill(ctx context.Context, call killCall, grace *int64) error {
	f.mu.Lock()
	gate := f.killGate
	if grace != nil {
		call.Grace = new(*grace)
	}
	f.kills = append(f.kills, call)
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID) (*runtime.PodStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pods[uid]
	if !ok {
		return &runtime.PodStatus{ID: uid}, nil
	}
	st := &runtime.PodStatus{ID: uid, Name: p.name, Namespace: p.namespace,
		Sandboxes: slices.Clone(p.sandboxes), Containers: slices.Clone(p.containers)}
	if len(p.sandboxes) > 0 && p.sandboxes[0].State == runtime.SandboxReady {
		st.IPs = []string{p.sandboxes[0].IP}
	}
	return st, nil
}

func (f *fakeRuntime) GetPods(context.Context) ([]*runtime.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtime.Pod
	for uid, p := range f.pods {
		rp := &runtime.Pod{ID: uid, Name: p.name, Namespace: p.namespace}
		for _, sb := range p.sandboxes {
			rp.Sandboxes = append(rp.Sandboxes, runtime.Sandbox{ID: sb.ID, State: sb.State, CreatedAt: sb.CreatedAt})
		}
		for _, c := range p.containers {
			rp.Containers = append(rp.Containers, runtime.Container{ID: c.ID, Name: c.Name, SandboxID: c.SandboxID,
				State: c.State, Image: c.Image, Hash: c.Hash, CreatedAt: c.CreatedAt})
		}
		out = append(out, rp)
	}
	slices.SortFunc(out, func(a, b *runtime.Pod) int { return compareUID(a.ID, b.ID) })
	return out, nil
}

func compareUID(a, b types.UID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ContainerPID: the fake's containers have no processes to watch.
func (f *fakeRuntime) ContainerPID(context.Context, string) (int, error) {
	return 0, errors.New("the fake runtime runs no processes")
}

func (f *fakeRuntime) GarbageCollect(context.Context, func(types.UID) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gcs++
	return nil
}

func (f *fakeRuntime) PodLogDir(pod *corev1.Pod) string {
	return filepath.Join(f.logRoot, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

func (f *fakeRuntime) RemovePodLogDir(pod *corev1.Pod) error {
	return os.RemoveAll(f.PodLogDir(pod))
}

// Observations, copied under the lock.

func (f *fakeRuntime) killCalls() []killCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.kills)
}

// stopCalls are the StopPod calls: the terminations.
func (f *fakeRuntime) stopCalls() []killCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []killCall
	for _, c := range f.kills {
		if c.Stop {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeRuntime) syncCalls(uid types.UID) []syncCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []syncCall
	for _, s := range f.syncs {
		if s.UID == uid {
			out = append(out, s)
		}
	}
	return out
}

func (f *fakeRuntime) has(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.pods[uid]
	return ok
}

// runningIDs lists the IDs of the pod's running containers.
func (f *fakeRuntime) runningIDs(uid types.UID) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pods[uid]
	if !ok {
		return nil
	}
	var out []string
	for id := range p.running {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// podContainer is the pod's container (a sidecar or an app container) of
// that name, or nil.
func podContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
