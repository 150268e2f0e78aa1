package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/agent"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// The tests in this file run the agent core as the standalone binary wires
// it (file source, merger, runtime, volumes, agent) against the real
// containerd.

// agentInstance is one agent process, in the small: its own merger, file
// source and agent over a shared manifest directory and state directory.
type agentInstance struct {
	agent  *agent.Agent
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   chan error
}

func startAgent(t *testing.T, rt *runtime.Runtime, node, manifests, root string) *agentInstance {
	t.Helper()
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 1})
	merger := config.NewMerger(config.MergerOptions{Mode: config.Incremental, Logger: log})
	files, err := config.NewFileSource(config.FileOptions{Path: manifests, NodeName: node, Sink: merger, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	vols, err := volumes.New(volumes.Options{RootDir: root, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	// The parts as cmd/nodeagent/app builds them, without a checkpoint.
	pods, statuses := podmanager.New(), status.NewStore()
	pl, err := pleg.New(pleg.Options{Runtime: rt, Interval: 200 * time.Millisecond, ContainerPID: rt.ContainerPID, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prober.New(prober.Options{Exec: rt, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := keeper.New(keeper.Options{})
	if err != nil {
		t.Fatal(err)
	}
	syncer, err := agent.NewSyncer(agent.SyncerOptions{NodeName: node, Runtime: rt, Volumes: vols, Pods: pods, Statuses: statuses, PLEG: pl, Prober: pr, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	desired := func(uid types.UID) bool { _, ok := pods.PodByUID(uid); return ok }
	workers, err := podworkers.New(podworkers.Options{Syncer: ckpt.Syncer(syncer, statuses.Status, desired), Metrics: syncer.WorkerMetrics(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	sourcesReady := func() bool { return merger.SeenAllSources(podtypes.FileSource) }
	a, err := agent.New(agent.Options{
		Syncer: syncer, Workers: workers, PLEG: pl, Prober: pr, Checkpoint: ckpt,
		RootDir: root, Updates: merger.Updates(), SourcesReady: sourcesReady,
		HousekeepingInterval: 500 * time.Millisecond,
		Logger:               log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runs := []func(context.Context) error{files.Run, a.Run, workers.Run, pl.Run, pr.Run}
	in := &agentInstance{agent: a, cancel: cancel, errs: make(chan error, len(runs))}
	for _, run := range runs {
		in.wg.Add(1)
		go func() { defer in.wg.Done(); in.errs <- run(ctx) }()
	}
	t.Cleanup(in.stop)
	return in
}

// stop ends the instance and waits for it; what runs stays running.
func (in *agentInstance) stop() {
	in.cancel()
	in.wg.Wait()
}

// podByName returns the agent's view of the static pod with this name.
func (in *agentInstance) podByName(name string) (agent.PodInfo, bool) {
	for _, p := range in.agent.Pods() {
		if p.Pod.Name == name {
			return p, true
		}
	}
	return agent.PodInfo{}, false
}

const agentManifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command: ["sh", "-c", "trap 'exit 0' TERM; echo %s; while true; do sleep 0.1; done"]
`

// criPods counts, for pods named name, the ready sandboxes and running
// containers, and lists the running containers' IDs by pod UID.
func criPods(ctx context.Context, cri runtimeapi.RuntimeServiceClient, name string) (readySandboxes int, running map[types.UID][]string, all int, err error) {
	sel := map[string]string{runtime.LabelPodName: name}
	sbs, err := cri.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return 0, nil, 0, err
	}
	cs, err := cri.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return 0, nil, 0, err
	}
	for _, sb := range sbs.GetItems() {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			readySandboxes++
		}
	}
	running = map[types.UID][]string{}
	for _, c := range cs.GetContainers() {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			uid := types.UID(c.GetLabels()[runtime.LabelPodUID])
			running[uid] = append(running[uid], c.GetId())
		}
	}
	return readySandboxes, running, len(sbs.GetItems()) + len(cs.GetContainers()), nil
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAgentStaticPodLifecycle(t *testing.T) {
	rt := newRuntime(t)
	cri := env.CRI(t).Runtime
	node := fmt.Sprintf("agent-%d", os.Getpid())
	podName := "web-" + node
	manifests, root := t.TempDir(), t.TempDir()
	manifest := filepath.Join(manifests, "web.yaml")
	ctx := context.Background()

	// Whatever happens, leave nothing behind in containerd.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pods, err := rt.GetPods(ctx)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, p := range pods {
			if p.Name == podName {
				if err := rt.KillPod(ctx, nil, runtime.Pod{ID: p.ID}, new(int64)); err != nil {
					t.Errorf("cleanup: KillPod: %v", err)
				}
			}
		}
	})

	write := func(generation string) {
		t.Helper()
		tmp := manifest + ".tmp"
		if err := os.WriteFile(tmp, fmt.Appendf(nil, agentManifest, env.BusyboxImage, generation), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, manifest); err != nil {
			t.Fatal(err)
		}
	}
	runningPod := func(in *agentInstance) func() bool {
		return func() bool {
			p, ok := in.podByName(podName)
			return ok && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].Ready
		}
	}

	// 1. A manifest appears: the pod runs.
	a1 := startAgent(t, rt, node, manifests, root)
	write("one")
	waitFor(t, 60*time.Second, "the pod runs", runningPod(a1))
	first, _ := a1.podByName(podName)
	t.Logf("pod %s running as %s", first.Pod.UID, first.Status.ContainerStatuses[0].ContainerID)

	// 2. The manifest is edited: a new UID for the same name. The old
	// generation must be stopped before the new one starts.
	var overlap atomic.Value
	pollCtx, stopPoll := context.WithCancel(ctx)
	var pollWG sync.WaitGroup
	pollWG.Go(func() {
		for pollCtx.Err() == nil {
			ready, running, _, err := criPods(pollCtx, cri, podName)
			if err == nil && (ready > 1 || len(running) > 1) {
				overlap.Store(fmt.Sprintf("%d ready sandboxes, running containers by pod %v", ready, running))
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	write("two")
	waitFor(t, 60*time.Second, "the edited pod runs", func() bool {
		p, ok := a1.podByName(podName)
		return ok && p.Pod.UID != first.Pod.UID && runningPod(a1)()
	})
	waitFor(t, 30*time.Second, "the old generation is gone", func() bool {
		_, running, _, err := criPods(ctx, cri, podName)
		return err == nil && len(running) == 1 && running[first.Pod.UID] == nil
	})
	stopPoll()
	pollWG.Wait()
	if o := overlap.Load(); o != nil {
		t.Errorf("two generations ran at once: %s", o)
	}
	second, _ := a1.podByName(podName)
	if len(a1.agent.Pods()) != 1 {
		t.Errorf("agent lists %d pods, want 1", len(a1.agent.Pods()))
	}

	// 3. The agent stops: nothing is killed. A new agent adopts the pod.
	_, before, _, err := criPods(ctx, cri, podName)
	if err != nil {
		t.Fatal(err)
	}
	a1.stop()
	time.Sleep(time.Second)
	_, after, _, err := criPods(ctx, cri, podName)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("running containers changed when the agent stopped: %v, then %v", before, after)
	}
	a2 := startAgent(t, rt, node, manifests, root)
	waitFor(t, 30*time.Second, "the new agent reports the pod running", runningPod(a2))
	time.Sleep(2 * time.Second) // a few relists and housekeeping periods
	adopted, _ := a2.podByName(podName)
	_, now, all, err := criPods(ctx, cri, podName)
	if err != nil {
		t.Fatal(err)
	}
	if adopted.Pod.UID != second.Pod.UID || fmt.Sprint(now) != fmt.Sprint(before) {
		t.Errorf("not adopted: pod %s with containers %v, want pod %s with %v", adopted.Pod.UID, now, second.Pod.UID, before)
	}
	if got, want := adopted.Status.ContainerStatuses[0].ContainerID, second.Status.ContainerStatuses[0].ContainerID; got != want {
		t.Errorf("container ID after adoption = %s, want %s", got, want)
	}
	if all != 2 {
		t.Errorf("containerd holds %d sandboxes and containers of the pod, want 2 (one each)", all)
	}
	for _, e := range a2.agent.Timeline(adopted.Pod.UID) {
		if e.Kind == "runtime" {
			t.Errorf("the new agent acted on an adopted pod: %s", e.Message)
		}
	}

	// 4. The manifest is removed: containers and sandbox go.
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the pod is gone from containerd", func() bool {
		_, _, all, err := criPods(ctx, cri, podName)
		return err == nil && all == 0
	})
	waitFor(t, 10*time.Second, "the agent lists no pod", func() bool { return len(a2.agent.Pods()) == 0 })
	if _, err := os.Stat(filepath.Join(root, "pods", string(second.Pod.UID))); !os.IsNotExist(err) {
		t.Errorf("pod directory left behind: %v", err)
	}
	a2.stop()
}
