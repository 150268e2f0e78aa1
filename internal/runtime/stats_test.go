package runtime

import (
	"context"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestContainerStats(t *testing.T) {
	w, pod, st := syncedPod(t)
	id := st.LatestContainer("app").ID
	w.cri.Lock()
	labels := w.cri.Containers[id].GetLabels()
	w.cri.FakeContainerStats = map[string]*runtimeapi.ContainerStats{id: {
		Attributes: &runtimeapi.ContainerAttributes{Id: id, Labels: labels},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: 1000, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 2_000_000_000}},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: 2000, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 4096}},
	}}
	w.cri.Unlock()
	got, err := w.rt.ContainerStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("stats %+v, want the one container", got)
	}
	u := got[0]
	if u.ID != id || u.Name != "app" || u.PodUID != pod.UID || u.PodName != "web" || u.PodNamespace != "default" ||
		!u.HasCPU || u.CPU.Seconds() != 2 || u.CPUTime.UnixNano() != 1000 || !u.HasMemory || u.MemoryWorkingSet != 4096 {
		t.Errorf("usage %+v", u)
	}
}
