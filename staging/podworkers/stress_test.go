package podworkers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// checkingSyncer fails the test if the workers ever break the Syncer
// contract: two calls at once for one pod, calls out of lifecycle order, a
// lengthened grace period, or two static pods of one name running at once.
// It fails, cancels and finishes calls at random.
type checkingSyncer struct {
	t  testing.TB
	mu sync.Mutex
	// per pod: the stage reached (0 sync, 1 terminating, 2 terminated, 3 finished)
	stage  map[types.UID]int
	calls  map[int]int // by stage
	busy   map[types.UID]bool
	grace  map[types.UID]int64
	holder map[string]types.UID // static pods from first SyncPod to finished
	rnd    *rand.Rand
	flaky  bool
}

func newCheckingSyncer(t testing.TB) *checkingSyncer {
	return &checkingSyncer{
		t: t, stage: map[types.UID]int{}, calls: map[int]int{}, busy: map[types.UID]bool{}, grace: map[types.UID]int64{},
		holder: map[string]types.UID{}, rnd: rand.New(rand.NewPCG(1, 2)), flaky: true,
	}
}

func (c *checkingSyncer) enter(uid types.UID, stage int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy[uid] {
		c.t.Errorf("%s: two Syncer calls at once", uid)
	}
	c.busy[uid] = true
	c.calls[stage]++
	if have := c.stage[uid]; stage < have || stage > have+1 || stage == have+1 && stage != 1 && stage != 3 {
		// Only a success (see leave) may move a pod to terminated or
		// finished; a kill moves it to terminating.
		c.t.Errorf("%s: call of stage %d after stage %d", uid, stage, have)
	}
	c.stage[uid] = max(c.stage[uid], stage)
}

// leave ends a call and picks its outcome.
func (c *checkingSyncer) leave(ctx context.Context, uid types.UID) (terminal bool, err error) {
	runtime.Gosched()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy[uid] = false
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if !c.flaky {
		return false, nil
	}
	switch n := c.rnd.IntN(20); {
	case n < 3:
		return false, errors.New("flake")
	case n < 4:
		return false, fmt.Errorf("cni: %w", ErrNetworkNotReady)
	case n < 5:
		return true, nil
	}
	return false, nil
}

func (c *checkingSyncer) SyncPod(ctx context.Context, _ UpdateType, pod *corev1.Pod) (bool, error) {
	c.enter(pod.UID, 0)
	if podtypes.IsStaticPod(pod) {
		c.mu.Lock()
		name := podtypes.PodFullName(pod)
		if h, ok := c.holder[name]; ok && h != pod.UID {
			c.t.Errorf("static pods %s and %s of %s run at once", h, pod.UID, name)
		}
		c.holder[name] = pod.UID
		c.mu.Unlock()
	}
	return c.leave(ctx, pod.UID)
}

func (c *checkingSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, grace int64, _ func(*corev1.PodStatus)) error {
	c.enter(pod.UID, 1)
	c.mu.Lock()
	if g, ok := c.grace[pod.UID]; ok && grace > g || grace < 0 {
		c.t.Errorf("%s: grace period %d after %d", pod.UID, grace, g)
	}
	c.grace[pod.UID] = grace
	c.mu.Unlock()
	_, err := c.leave(ctx, pod.UID)
	if err == nil {
		c.advance(pod.UID, 2)
		c.release(pod)
	}
	return err
}

// release frees the pod's full name once none of its containers runs.
func (c *checkingSyncer) release(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name := podtypes.PodFullName(pod); c.holder[name] == pod.UID {
		delete(c.holder, name)
	}
}

func (c *checkingSyncer) SyncTerminatingRuntimePod(ctx context.Context, pod RuntimePod) error {
	c.enter(pod.UID, 1)
	_, err := c.leave(ctx, pod.UID)
	return err
}

func (c *checkingSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	c.enter(pod.UID, 2)
	_, err := c.leave(ctx, pod.UID)
	if err == nil {
		c.advance(pod.UID, 3)
	}
	return err
}

func (c *checkingSyncer) advance(uid types.UID, stage int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stage[uid] = stage
}

// TestConcurrentLifecycles runs many pods through random updates from
// several goroutines while readers query, then kills everything and checks
// that every worker, goroutine and queue entry is gone.
func TestConcurrentLifecycles(t *testing.T) {
	const updaters, podsEach, names, steps = 4, 24, 6, 2000
	syncer := newCheckingSyncer(t)
	pw, err := New(Options{Syncer: syncer, ResyncInterval: time.Millisecond, BackoffPeriod: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); pw.Run(ctx) }()

	// agent serialises housekeeping with updates, as the agent's sync loop
	// does; updaters hold it shared, housekeeping exclusively.
	var agent sync.RWMutex
	desired := make([]map[types.UID]bool, updaters)
	var wg sync.WaitGroup
	for u := range updaters {
		desired[u] = map[types.UID]bool{}
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(u), 7))
			pods := make([]*corev1.Pod, podsEach)
			killed := make([]bool, podsEach)
			for i := range pods {
				pods[i] = stressPod(u, i, names)
			}
			for range steps {
				i := rnd.IntN(podsEach)
				uid := pods[i].UID
				agent.RLock()
				o := UpdatePodOptions{Type: Update, Pod: pods[i]}
				switch n := rnd.IntN(10); {
				case killed[i] && !desired[u][uid]:
					o.Type = 0 // gone from its source for good: never mentioned again
				case !killed[i] && !desired[u][uid]:
					o.Type = Create
					desired[u][uid] = true
				case n < 2:
					grace := rnd.Int64N(40)
					o = UpdatePodOptions{Type: Kill, Pod: pods[i], Kill: &KillPodOptions{GracePeriodOverride: &grace}}
					killed[i] = true
				case n < 3 && killed[i]:
					delete(desired[u], uid)
					o.Type = 0
				case n < 5:
					o.Type = Sync
				}
				if o.Type != 0 {
					if err := pw.UpdatePod(o); err != nil {
						t.Error(err)
					}
				}
				agent.RUnlock()
				runtime.Gosched()
			}
		})
	}
	stopReaders := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopReaders:
					return
				default:
				}
				uid := stressPod(i%updaters, i%podsEach, names).UID
				pw.IsPodTerminationRequested(uid)
				pw.CouldHaveRunningContainers(uid)
				pw.ShouldPodContentBeRemoved(uid)
				pw.IsPodKnownTerminated(uid)
				pw.DuePods()
			}
		})
	}
	housekeep := func() map[types.UID]KnownPod {
		agent.Lock()
		defer agent.Unlock()
		var want []types.UID
		for _, d := range desired {
			for uid := range d {
				want = append(want, uid)
			}
		}
		return pw.SyncKnownPods(want)
	}
	for range 50 {
		housekeep()
		time.Sleep(100 * time.Microsecond) // spread housekeeping over the run; nothing is timed
	}
	wg.Wait()
	close(stopReaders)
	readers.Wait()

	// Everything goes: the sources drop every pod, the Syncer stops failing,
	// and housekeeping drives the orphans to the end.
	agent.Lock()
	clear(desired)
	for u := range desired {
		desired[u] = map[types.UID]bool{}
	}
	agent.Unlock()
	syncer.mu.Lock()
	syncer.flaky = false
	syncer.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for len(housekeep()) != 0 {
		if time.Now().After(deadline) {
			pw.mu.Lock()
			for uid, w := range pw.workers {
				t.Errorf("left: %s %+v working=%v gone=%v spawned=%v", uid, w.state, w.working, w.gone, w.spawned)
			}
			pw.mu.Unlock()
			t.FailNow()
		}
		time.Sleep(50 * time.Microsecond)
	}
	waitFor(t, func() bool {
		pw.mu.Lock()
		defer pw.mu.Unlock()
		return pw.goroutines == 0 && pw.working == 0
	})
	pw.mu.Lock()
	if n, q := len(pw.workers), pw.queue.len(); n != 0 || q != 0 || pw.phases != (PhaseCounts{}) {
		t.Errorf("left behind: %d workers, %d queued, phases %+v", n, q, pw.phases)
	}
	if len(pw.gate.started) != 0 || len(pw.gate.waiting) != 0 {
		t.Errorf("start gate not empty: %v %v", pw.gate.started, pw.gate.waiting)
	}
	pw.mu.Unlock()
	cancel()
	<-ran
	t.Logf("Syncer calls: sync %d, terminating %d, terminated %d", syncer.calls[0], syncer.calls[1], syncer.calls[2])
}

// stressPod is pod i of updater u; static pods of different updaters share
// a few names, as successive edits of one manifest do.
func stressPod(u, i, names int) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(fmt.Sprintf("u%d-p%d", u, i)), Name: fmt.Sprintf("u%d-p%d", u, i), Namespace: "default",
		Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource)},
	}}
	if i%2 == 0 {
		pod.Name = fmt.Sprintf("static-%d", i%names)
		pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
	}
	return pod
}
