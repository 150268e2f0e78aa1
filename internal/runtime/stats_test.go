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

func TestPodNetworks(t *testing.T) {
	w, pod, st := syncedPod(t)
	sb := st.Sandboxes[0].ID
	w.cri.Lock()
	labels := w.cri.Sandboxes[sb].GetLabels()
	eth0 := &runtimeapi.NetworkInterfaceUsage{Name: "eth0", RxBytes: &runtimeapi.UInt64Value{Value: 100}, TxBytes: &runtimeapi.UInt64Value{Value: 200},
		RxErrors: &runtimeapi.UInt64Value{Value: 1}, TxErrors: &runtimeapi.UInt64Value{Value: 2}}
	w.cri.FakePodSandboxStats = map[string]*runtimeapi.PodSandboxStats{sb: {
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb, Labels: labels},
		Linux: &runtimeapi.LinuxPodSandboxStats{Network: &runtimeapi.NetworkUsage{
			Timestamp: 3000, DefaultInterface: eth0,
			Interfaces: []*runtimeapi.NetworkInterfaceUsage{eth0, {Name: "lo", RxBytes: &runtimeapi.UInt64Value{Value: 5}}},
		}},
	}}
	w.cri.Unlock()
	got, err := w.rt.PodNetworks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, ok := got[pod.UID]
	if len(got) != 1 || !ok {
		t.Fatalf("networks %+v, want the pod's", got)
	}
	want := InterfaceUsage{Name: "eth0", RxBytes: 100, RxErrors: 1, TxBytes: 200, TxErrors: 2}
	if n.Default != want || n.Time.UnixNano() != 3000 || len(n.Interfaces) != 2 || n.Interfaces[1].Name != "lo" || n.Interfaces[1].RxBytes != 5 {
		t.Errorf("network %+v", n)
	}
}
