package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/internal/allocation"
	"github.com/nodeagent/nodeagent/internal/checkpoint"
	"github.com/nodeagent/nodeagent/internal/checkpoint/keeper"
	"github.com/nodeagent/nodeagent/internal/containergc"
	"github.com/nodeagent/nodeagent/internal/pleg"
	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/internal/status"
	"github.com/nodeagent/nodeagent/internal/timeline"
	"github.com/nodeagent/nodeagent/internal/volumes"
	"github.com/nodeagent/nodeagent/staging/podmanager"
	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/staging/podworkers"
)

// testEnv runs an Agent over a fakeRuntime and real volumes, pod workers
// and pod manager, with short periods, until the test ends.
type testEnv struct {
	t        *testing.T
	rt       *fakeRuntime
	rootDir  string
	updates  chan podtypes.PodUpdate
	ready    atomic.Bool
	registry metrics.KubeRegistry
	agent    *Agent
	// checkpoint, updatesFrom and sourcesReady, if set before start, replace
	// the defaults (no checkpoint, e.updates, e.ready); beforeRun runs
	// between New and Run.
	checkpoint   checkpoint.Store
	updatesFrom  <-chan podtypes.PodUpdate
	sourcesReady func() bool
	beforeRun    func(*Agent)
	// sysctls, if set before start, replaces the default sysctl admission.
	sysctls *admission.Sysctls
	// housekeeping, if set before start, replaces the 20 ms period.
	housekeeping time.Duration
	// allocation, if set before start, replaces the in-memory store.
	allocation *allocation.Store
	cancel     context.CancelFunc
	done       chan error
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	e := &testEnv{
		t:        t,
		rt:       newFakeRuntime(filepath.Join(dir, "logs")),
		rootDir:  filepath.Join(dir, "root"),
		updates:  make(chan podtypes.PodUpdate, 10),
		registry: metrics.NewKubeRegistry(),
	}
	return e
}

// start builds the agent and runs it; it stops when the test ends.
func (e *testEnv) start() *testEnv {
	e.t.Helper()
	vols, err := volumes.New(volumes.Options{RootDir: e.rootDir})
	if err != nil {
		e.t.Fatal(err)
	}
	var updates <-chan podtypes.PodUpdate = e.updates
	if e.updatesFrom != nil {
		updates = e.updatesFrom
	}
	ready := e.ready.Load
	if e.sourcesReady != nil {
		ready = e.sourcesReady
	}
	housekeeping := 20 * time.Millisecond
	if e.housekeeping != 0 {
		housekeeping = e.housekeeping
	}
	log := testr.NewWithOptions(e.t, testr.Options{Verbosity: 2})
	p := buildParts(e.t, partsOptions{rt: e.rt, vols: vols, checkpoint: e.checkpoint, allocation: e.allocation, registry: e.registry, log: log})
	e.agent, err = New(Options{
		Syncer: p.syncer, Workers: p.workers, PLEG: p.pleg, Prober: p.prober, ProbeSteps: p.steps, Checkpoint: p.keeper,
		RootDir: e.rootDir, Updates: updates, SourcesReady: ready,
		HousekeepingInterval: housekeeping, DueInterval: 10 * time.Millisecond,
		Sysctls: e.sysctls, NodeLabels: map[string]string{"kubernetes.io/hostname": "node-1", "pool": "infra"},
		Logger: log,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if e.beforeRun != nil {
		e.beforeRun(e.agent)
	}
	gc, err := containergc.New(containergc.Options{
		Runtime: e.rt, Interval: 30 * time.Millisecond, SourcesReady: ready,
		Gone: func(uid types.UID) bool {
			_, desired := p.pods.PodByUID(uid)
			return !desired && !p.workers.CouldHaveRunningContainers(uid)
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	go func() {
		e.done <- runParts(ctx, p.keeper.Run, e.agent.Run, p.workers.Run, p.pleg.Run, p.prober.Run, gc.Run)
	}()
	e.t.Cleanup(func() { e.stop() })
	return e
}

// parts are the long-running parts the wiring builds around the agent.
type parts struct {
	pods     *podmanager.Manager
	statuses *status.Store
	pleg     *pleg.PLEG
	prober   *prober.Manager
	steps    *prober.Steps
	timeline *timeline.Log
	keeper   *keeper.Keeper
	syncer   *Syncer
	workers  *podworkers.PodWorkers
}

type partsOptions struct {
	rt         *fakeRuntime
	vols       Volumes
	checkpoint checkpoint.Store
	allocation *allocation.Store
	registry   metrics.KubeRegistry
	log        logr.Logger
}

// buildParts builds the agent's parts as cmd/nodeagent/app does, in
// standalone mode, with short periods.
func buildParts(t *testing.T, o partsOptions) parts {
	t.Helper()
	p := parts{pods: podmanager.New(), statuses: status.NewStore()}
	var err error
	if p.pleg, err = pleg.New(pleg.Options{Runtime: o.rt, Interval: 10 * time.Millisecond, ContainerPID: o.rt.ContainerPID, Registry: o.registry, Logger: o.log}); err != nil {
		t.Fatal(err)
	}
	p.timeline = timeline.New(0)
	if p.steps, err = prober.NewSteps(prober.StepsOptions{Timeline: p.timeline}); err != nil {
		t.Fatal(err)
	}
	if p.prober, err = prober.New(prober.Options{Exec: o.rt, Steps: p.steps, Logger: o.log}); err != nil {
		t.Fatal(err)
	}
	if p.keeper, err = keeper.New(keeper.Options{Store: o.checkpoint, Registry: o.registry, Logger: o.log.WithName("checkpoint")}); err != nil {
		t.Fatal(err)
	}
	p.syncer, err = NewSyncer(SyncerOptions{
		NodeName: "node-1", Runtime: o.rt, Volumes: o.vols, Pods: p.pods, Statuses: p.statuses, PLEG: p.pleg, Prober: p.prober, Timeline: p.timeline,
		Allocation: o.allocation, Registry: o.registry, Logger: o.log,
	})
	if err != nil {
		t.Fatal(err)
	}
	desired := func(uid types.UID) bool { _, ok := p.pods.PodByUID(uid); return ok }
	p.workers, err = podworkers.New(podworkers.Options{Syncer: p.keeper.Syncer(p.syncer, p.statuses.Status, desired), Metrics: p.syncer.WorkerMetrics(), Logger: o.log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runParts runs the parts until ctx ends, then the checkpoint's writer
// until they have returned, as the wiring does: it returns the first
// error.
func runParts(ctx context.Context, writer func(context.Context) error, runs ...func(context.Context) error) error {
	wctx, stopWriter := context.WithCancel(context.WithoutCancel(ctx))
	writerDone := make(chan error, 1)
	go func() { writerDone <- writer(wctx) }()
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range runs {
		g.Go(func() error { return run(gctx) })
	}
	err := g.Wait()
	stopWriter()
	return errors.Join(err, <-writerDone)
}

// stop ends Run and waits for it; it may be called more than once.
func (e *testEnv) stop() error {
	e.t.Helper()
	if e.cancel == nil {
		return nil
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.done:
		return err
	case <-time.After(10 * time.Second):
		e.t.Fatal("Run did not return within 10s of its context ending")
	}
	return nil
}

func (e *testEnv) send(op podtypes.Op, pods ...*corev1.Pod) {
	e.updates <- podtypes.PodUpdate{Op: op, Source: podtypes.FileSource, Pods: pods}
}

// eventually polls cond every 5 ms for up to 5 s.
func (e *testEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *testEnv) phase(uid types.UID) corev1.PodPhase {
	info, ok := e.agent.Pod(uid)
	if !ok {
		return ""
	}
	return info.Status.Phase
}

func (e *testEnv) workerPhase(uid types.UID) string {
	info, _ := e.agent.Pod(uid)
	return info.WorkerPhase
}

// staticPod returns a file-source pod whose UID hashes its spec, as the
// config module gives static pods theirs.
func staticPod(name, image string, policy corev1.RestartPolicy) *corev1.Pod {
	grace := int64(7)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-node-1", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "main", Image: image,
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	sum := sha256.Sum256([]byte(name + "/" + image + "/" + string(policy)))
	hash := fmt.Sprintf("%x", sum[:8])
	pod.UID = types.UID(hash)
	pod.Annotations = map[string]string{
		podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource),
		podtypes.ConfigHashAnnotationKey:   hash,
	}
	return pod
}

func kinds(e *testEnv, uid types.UID) map[string]int {
	out := map[string]int{}
	for _, en := range e.agent.Timeline(uid) {
		out[en.Kind]++
	}
	return out
}
