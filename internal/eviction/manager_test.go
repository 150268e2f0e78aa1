package eviction

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// world is what a manager under test sees: one memory reading and one
// disk reading the test sets, pods with their usage, and the evictions
// it asks for.
type world struct {
	t        *testing.T
	clock    *clocktesting.FakeClock
	memory   Reading
	disk     Reading
	pods     []*corev1.Pod
	usage    map[types.UID]PodUsage
	evicted  []string // "name grace message"
	measures int      // calls of Usage
	reclaim  func()   // what the node's own disk reclaim frees
}

func newWorld(t *testing.T) *world {
	return &world{t: t, clock: clocktesting.NewFakeClock(time.Unix(1000, 0)),
		memory: Reading{Available: 1 << 30, Capacity: 2 << 30}, disk: Reading{Available: 100, Capacity: 100},
		usage: map[types.UID]PodUsage{}}
}

func (w *world) manager(opts Options) *Manager {
	w.t.Helper()
	opts.Observe = func(context.Context) (Observation, error) {
		return Observation{Signals: map[string]Reading{SignalAllocatableMemoryAvailable: w.memory, SignalNodeFSAvailable: w.disk}}, nil
	}
	opts.Pods = func() []*corev1.Pod { return append([]*corev1.Pod(nil), w.pods...) }
	opts.Usage = func(context.Context, []*corev1.Pod) (map[types.UID]PodUsage, error) {
		w.measures++
		return w.usage, nil
	}
	opts.Evict = func(pod *corev1.Pod, msg string, grace int64) bool {
		w.evicted = append(w.evicted, pod.Name+" "+resource.NewQuantity(grace, resource.DecimalSI).String()+" "+msg)
		return true
	}
	opts.Reclaimed = func(types.UID) bool { return true }
	opts.ReclaimDisk = func(context.Context) error {
		if w.reclaim != nil {
			w.reclaim()
		}
		return nil
	}
	opts.Clock = w.clock
	m, err := New(opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

// pod adds a pod using memMi of memory, requesting reqMi, at priority.
func (w *world) pod(name string, memMi, reqMi int64, prio int32) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: corev1.PodSpec{Priority: &prio, Containers: []corev1.Container{{Name: "main",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(reqMi<<20, resource.BinarySI)}}}}},
	}
	w.pods = append(w.pods, p)
	w.usage[p.UID] = PodUsage{Memory: memMi << 20, ContainerMemory: map[string]int64{"main": memMi << 20}, ContainerEphemeral: map[string]int64{"main": memMi}}
	return p
}

func (w *world) takeEvicted() []string {
	out := w.evicted
	w.evicted = nil
	return out
}

func TestHardMemoryThresholdEvictsOnePodInTheKubeletsOrder(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard})
	w.pod("within-request", 300, 400, 0)
	w.pod("over-small", 150, 100, 0)
	w.pod("over-big", 250, 100, 0)
	w.pod("over-low-priority", 120, 100, -10)
	static := w.pod("static-over", 900, 0, -100)
	static.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}

	ctx := context.Background()
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 0 || len(m.Pressure()) != 0 {
		t.Fatalf("with 1Gi available: evicted %v, pressure %v", got, m.Pressure())
	}
	w.memory.Available = 50 << 20
	m.synchronize(ctx)
	got := w.takeEvicted()
	if len(got) != 1 {
		t.Fatalf("evicted %v, want one pod", got)
	}
	// The static pod uses the most and has the lowest priority, but is
	// never evicted; of the others over their request, the lowest
	// priority goes first, with the kubelet's grace and words.
	want := "over-low-priority 1 The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 120Mi, request is 100Mi, has larger consumption of memory. "
	if got[0] != want {
		t.Errorf("evicted\n %q\nwant\n %q", got[0], want)
	}
	if p := m.Pressure(); len(p) != 1 || !p[SignalAllocatableMemoryAvailable] {
		t.Errorf("Pressure() = %v", p)
	}
	w.pods = w.pods[:3] // it is gone; the static pod is left out
	w.pods = append(w.pods, static)
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 1 || !strings.HasPrefix(got[0], "over-big 1 ") {
		t.Errorf("next evicted %v, want over-big: over its request by the most at equal priority", got)
	}
}

func TestSoftThresholdWaitsForItsGracePeriod(t *testing.T) {
	w := newWorld(t)
	soft, _ := ParseThresholds("memory.available<500Mi")
	grace, _ := ParseGracePeriods("memory.available=30s")
	m := w.manager(Options{Soft: soft, SoftGracePeriods: grace, MaxPodGracePeriod: 20})
	long := int64(60)
	w.pod("a", 200, 0, 0).Spec.TerminationGracePeriodSeconds = &long
	ctx := context.Background()

	w.memory.Available = 400 << 20
	m.synchronize(ctx)
	w.clock.Step(29 * time.Second)
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 0 {
		t.Fatalf("evicted %v before the grace period passed", got)
	}
	if p := m.Pressure(); len(p) != 1 || !p[SignalAllocatableMemoryAvailable] {
		t.Errorf("Pressure() = %v during the grace period: the pressure shows before any eviction", p)
	}
	w.clock.Step(time.Second)
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 1 || !strings.HasPrefix(got[0], "a 20 ") {
		t.Errorf("evicted %v, want a with the maximum pod grace period 20 (its own is 60)", got)
	}

	// A negative maximum defers to the pod's own grace period.
	m.opts.MaxPodGracePeriod = -1
	w.pods = w.pods[:0]
	w.pod("b", 200, 0, 0).Spec.TerminationGracePeriodSeconds = &long
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 1 || !strings.HasPrefix(got[0], "b 60 ") {
		t.Errorf("evicted %v, want b with its own grace period 60", got)
	}
	m.opts.MaxPodGracePeriod = 20

	// Recovered, then short again: the grace period starts over.
	w.memory.Available = 1 << 30
	m.synchronize(ctx)
	w.memory.Available = 400 << 20
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 0 {
		t.Errorf("evicted %v at once after a recovery", got)
	}
}

func TestMinimumReclaimKeepsTheThresholdMetUntilReclaimed(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	minReclaim, _ := ParseMinimumReclaim("memory.available=200Mi")
	m := w.manager(Options{Hard: hard, MinimumReclaim: minReclaim})
	w.pod("a", 200, 0, 0)
	w.pod("b", 100, 0, 0)
	ctx := context.Background()

	w.memory.Available = 50 << 20
	m.synchronize(ctx)
	w.memory.Available = 250 << 20 // above the bound, short of bound + minimum reclaim
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 2 {
		t.Errorf("evicted %v, want a then b: 250Mi is short of the 300Mi that resolves the threshold", got)
	}
	w.memory.Available = 300 << 20
	m.synchronize(ctx)
	if p := m.Pressure(); len(p) != 1 || p[SignalAllocatableMemoryAvailable] {
		t.Errorf("Pressure() = %v with the minimum reclaim available, want it held, not met", p)
	}
}

func TestDiskIsReclaimedFromTheNodeBeforeAnyPodIsEvicted(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("nodefs.available<10%")
	m := w.manager(Options{Hard: hard})
	w.pod("a", 1, 0, 0)
	ctx := context.Background()

	w.disk.Available = 5
	w.reclaim = func() { w.disk.Available = 50 }
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 0 {
		t.Errorf("evicted %v although removing images freed enough", got)
	}
	w.disk.Available = 5
	w.reclaim = func() { w.disk.Available = 6 }
	m.synchronize(ctx)
	if got := w.takeEvicted(); len(got) != 1 || !strings.HasPrefix(got[0], "a 1 The node was low on resource: ephemeral-storage. Threshold quantity: 10, available: 6. ") {
		t.Errorf("evicted %v, want a, for the disk", got)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	soft, _ := ParseThresholds("memory.available<1Gi")
	grace, _ := ParseGracePeriods("pid.available=10s")
	_, err := New(Options{Soft: soft, SoftGracePeriods: grace})
	for _, want := range []string{"soft threshold of memory.available has no grace period", "pid.available has a grace period but no soft threshold"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New = %v, want an error with %q", err, want)
		}
	}
}

func TestNewReportsEveryInvalidOption(t *testing.T) {
	soft, _ := ParseThresholds("memory.available<1Gi")
	_, err := New(Options{Soft: soft, Interval: -time.Second})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New() = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"Observe is required", "Pods is required", "Usage is required", "Evict is required",
		"Reclaimed is required", "soft threshold of memory.available has no grace period", "Interval is negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New() = %v, want it to say %q", err, want)
		}
	}
}

func TestRunEndsWithItsContext(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// After an eviction the manager waits for what the pod held to be
// released (a memory emptyDir's pages go with its volume, after its
// containers stopped) before it observes again, so that it never evicts a
// second pod for memory the first still holds; at most cleanupTimeout.
func TestAnEvictionWaitsForThePodsResources(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard})
	var released atomic.Bool
	m.opts.Reclaimed = func(types.UID) bool { return released.Load() }
	w.pod("a", 200, 0, 0)
	w.memory.Available = 50 << 20
	pass := func() (stepped time.Duration) {
		done := make(chan struct{})
		go func() {
			m.synchronize(context.Background())
			close(done)
		}()
		for {
			select {
			case <-done:
				return stepped
			case <-time.After(time.Millisecond):
				if w.clock.HasWaiters() {
					w.clock.Step(cleanupPoll)
					stepped += cleanupPoll
				}
			}
		}
	}
	// Still held: the pass ends after cleanupTimeout, not before.
	if stepped := pass(); stepped < cleanupTimeout {
		t.Errorf("the pass ended %v after the eviction, before the pod's resources were released and before %v", stepped, cleanupTimeout)
	}
	w.pods = w.pods[:0]
	w.pod("b", 200, 0, 0)
	released.Store(true)
	if stepped := pass(); stepped >= cleanupTimeout {
		t.Errorf("the pass waited %v although the pod's resources were released", stepped)
	}
	if got := w.takeEvicted(); len(got) != 2 {
		t.Errorf("evicted %v, want a then b", got)
	}
}

// A signal met once stays under pressure for the transition period after
// it was last met, held rather than met: a pressure an eviction relieved
// at once still shows on the Node.
func TestPressureHoldsForTheTransitionPeriod(t *testing.T) {
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard, PressureTransition: time.Minute})
	ctx := context.Background()
	w.memory.Available = 50 << 20
	m.synchronize(ctx) // no pod to evict
	w.memory.Available = 1 << 30
	for _, step := range []struct {
		after time.Duration
		want  map[string]bool
	}{
		{0, map[string]bool{SignalAllocatableMemoryAvailable: false}},
		{59 * time.Second, map[string]bool{SignalAllocatableMemoryAvailable: false}},
		{time.Second, map[string]bool{}},
	} {
		w.clock.Step(step.after)
		m.synchronize(ctx)
		if got := m.Pressure(); !maps.Equal(got, step.want) {
			t.Errorf("%v after: Pressure() = %v, want %v", step.after, got, step.want)
		}
	}
}
