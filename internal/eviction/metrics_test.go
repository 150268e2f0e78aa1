package eviction

import (
	"context"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// An eviction counts under the kubelet's name and under the agent's,
// labelled with the signal whose threshold was met.
func TestEvictionsAreCounted(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	w := newWorld(t)
	hard, _ := ParseThresholds("memory.available<100Mi")
	m := w.manager(Options{Hard: hard, Registry: reg})
	w.pod("over", 150, 100, 0)
	m.synchronize(context.Background())
	if got := w.takeEvicted(); len(got) != 0 {
		t.Fatalf("evicted %v with memory to spare", got)
	}
	w.memory.Available = 50 << 20
	m.synchronize(context.Background())
	if got := w.takeEvicted(); len(got) != 1 {
		t.Fatalf("evicted %v, want one pod", got)
	}
	for _, name := range []string{"kubelet_evictions", "nodeagent_evictions_total"} {
		got, err := testutil.GetCounterValuesFromGatherer(reg, name, nil, "eviction_signal")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[SignalAllocatableMemoryAvailable] != 1 {
			t.Errorf("%s = %v, want one eviction for %s", name, got, SignalAllocatableMemoryAvailable)
		}
	}
}
