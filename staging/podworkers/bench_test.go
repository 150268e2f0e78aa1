package podworkers

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const (
	benchPods    = 10000
	benchUpdates = 10 // per pod, the first a Create
)

// noopSyncer succeeds at once and counts its calls.
type noopSyncer struct{}

func (noopSyncer) SyncPod(context.Context, UpdateType, *corev1.Pod) (bool, error) {
	return false, nil
}
func (noopSyncer) SyncTerminatingPod(context.Context, *corev1.Pod, int64, func(*corev1.PodStatus)) error {
	return nil
}
func (noopSyncer) SyncTerminatingRuntimePod(context.Context, RuntimePod) error { return nil }
func (noopSyncer) SyncTerminatedPod(context.Context, *corev1.Pod) error        { return nil }

type countingMetrics struct {
	NoopMetrics
	syncs int // guarded by PodWorkers' lock, under which metrics are called
}

func (m *countingMetrics) ObserveSync(Work, time.Duration) { m.syncs++ }

func benchPodList() []*corev1.Pod {
	pods := make([]*corev1.Pod, benchPods)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			UID: types.UID(fmt.Sprintf("uid-%05d", i)), Name: fmt.Sprintf("pod-%05d", i), Namespace: "default",
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource)},
		}}
	}
	return pods
}

// startBench returns running pod workers and a function that stops them.
func startBench(b *testing.B, m Metrics) (*PodWorkers, func()) {
	pw, err := New(Options{Syncer: noopSyncer{}, Metrics: m})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pw.Run(ctx) }()
	return pw, func() { cancel(); <-done }
}

func waitIdle(b *testing.B, pw *PodWorkers) {
	waitFor(b, func() bool {
		pw.mu.Lock()
		defer pw.mu.Unlock()
		return pw.working == 0
	})
}

func update(b *testing.B, pw *PodWorkers, o UpdatePodOptions) {
	if err := pw.UpdatePod(o); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUpdatePod10kPods sends 10 updates to each of 10,000 pods (a
// Create, then Updates, round-robin) through a no-op Syncer and waits until
// every worker is idle. One op is all 100,000 updates.
func BenchmarkUpdatePod10kPods(b *testing.B) {
	pods := benchPodList()
	b.ReportAllocs()
	var syncs int
	for b.Loop() {
		m := &countingMetrics{}
		pw, stop := startBench(b, m)
		for round := range benchUpdates {
			typ := Update
			if round == 0 {
				typ = Create
			}
			for _, pod := range pods {
				update(b, pw, UpdatePodOptions{Type: typ, Pod: pod})
			}
		}
		waitIdle(b, pw)
		b.StopTimer()
		pw.mu.Lock()
		syncs += m.syncs
		pw.mu.Unlock()
		stop()
		b.StartTimer()
	}
	updates := float64(b.N * benchPods * benchUpdates)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/updates, "ns/update")
	b.ReportMetric(float64(syncs)/updates, "syncs/update")
}

// BenchmarkWorkerMemory creates 10,000 idle, running workers and reports
// what each costs: heap (record, channel, context, logger, map entry) and
// goroutine stack.
func BenchmarkWorkerMemory(b *testing.B) {
	pods := benchPodList()
	var heap, stack float64
	for b.Loop() {
		b.StopTimer()
		before := memStats()
		b.StartTimer()
		pw, stop := startBench(b, nil)
		for _, pod := range pods {
			update(b, pw, UpdatePodOptions{Type: Create, Pod: pod})
		}
		waitIdle(b, pw)
		b.StopTimer()
		after := memStats()
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		stack += float64(after.StackInuse) - float64(before.StackInuse)
		stop()
		b.StartTimer()
	}
	b.ReportMetric(heap/float64(b.N*benchPods), "heap-B/worker")
	b.ReportMetric(stack/float64(b.N*benchPods), "stack-B/worker")
}

// BenchmarkLifecycle10kPods takes 10,000 pods through a whole life: a
// Create, 8 Updates, a Kill, termination, cleanup, and housekeeping that
// forgets them; every worker goroutine has ended when an op ends.
func BenchmarkLifecycle10kPods(b *testing.B) {
	pods := benchPodList()
	b.ReportAllocs()
	for b.Loop() {
		pw, stop := startBench(b, nil)
		for round := range benchUpdates {
			typ := Update
			switch round {
			case 0:
				typ = Create
			case benchUpdates - 1:
				typ = Kill
			}
			for _, pod := range pods {
				update(b, pw, UpdatePodOptions{Type: typ, Pod: pod})
			}
		}
		waitIdle(b, pw)
		if known := pw.SyncKnownPods(nil); len(known) != 0 {
			b.Fatalf("%d pods still known", len(known))
		}
		pw.mu.Lock()
		if pw.goroutines != 0 {
			b.Fatalf("%d worker goroutines outlive their pods", pw.goroutines)
		}
		pw.mu.Unlock()
		stop()
	}
}

func memStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
