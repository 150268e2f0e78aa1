package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/runtime"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// BenchmarkRuntimeStartPod measures how long a pod takes from nothing to
// its container RUNNING: through SyncPod (status lookup, image check,
// sandbox, container), and, as the floor, the three CRI calls alone
// (RunPodSandbox, CreateContainer, StartContainer). Each op is one pod;
// run it with -benchtime=30x for p50/p99 over 30 pods:
//
//	go test -run '^$' -bench BenchmarkRuntimeStartPod -benchtime=30x ./...
func BenchmarkRuntimeStartPod(b *testing.B) {
	for _, tc := range []struct {
		name        string
		hostNetwork bool
	}{{"host-network", true}, {"pod-network", false}} {
		b.Run("SyncPod/"+tc.name, func(b *testing.B) { benchSyncPod(b, tc.hostNetwork) })
		b.Run("CRI-floor/"+tc.name, func(b *testing.B) { benchFloor(b, tc.hostNetwork) })
	}
}

func benchSyncPod(b *testing.B, hostNetwork bool) {
	ctx := context.Background()
	rt := newRuntime(b)
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pod := busyboxPod(fmt.Sprintf("bench-%d", i), hostNetwork, "sleep 300")
		b.StopTimer()
		killAtEnd(b, rt, pod)
		b.StartTimer()

		start := time.Now()
		if _, err := rt.SyncPod(ctx, pod, nil, nil, runtime.SyncHooks{}); err != nil {
			b.Fatalf("SyncPod: %v", err)
		}
		durations = append(durations, time.Since(start))

		b.StopTimer()
		if c := podStatus(b, rt, pod.UID).LatestContainer("main"); c == nil || c.State != runtime.ContainerStateRunning {
			b.Fatalf("after SyncPod: container %+v, want running", c)
		}
		if err := rt.KillPod(ctx, pod, runtime.Pod{ID: pod.UID}, new(int64)); err != nil {
			b.Fatalf("KillPod: %v", err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, durations)
}

func benchFloor(b *testing.B, hostNetwork bool) {
	ctx := context.Background()
	cri := env.CRI(b)
	rt := newRuntime(b) // only to clean up, by the pod's labels
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pod := busyboxPod(fmt.Sprintf("floor-%d", i), hostNetwork, "sleep 300")
		killAtEnd(b, rt, pod)
		sandbox, container := floorConfigs(b, rt, pod)
		b.StartTimer()

		start := time.Now()
		id := runFloor(b, ctx, cri, sandbox, container)
		durations = append(durations, time.Since(start))

		b.StopTimer()
		if st, err := cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); err != nil ||
			st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			b.Fatalf("floor container: %v, %v; want running", st, err)
		}
		if err := rt.KillPod(ctx, nil, runtime.Pod{ID: pod.UID}, new(int64)); err != nil {
			b.Fatalf("KillPod: %v", err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, durations)
}

// floorConfigs are the CRI configs of pod, made by hand the way SyncPod
// makes them (labels, log directory, cgroup parent, namespaces).
func floorConfigs(b *testing.B, rt *runtime.Runtime, pod *corev1.Pod) (*runtimeapi.PodSandboxConfig, *runtimeapi.ContainerConfig) {
	logDir := rt.PodLogDir(pod)
	if err := os.MkdirAll(filepath.Join(logDir, "main"), 0o755); err != nil {
		b.Fatal(err)
	}
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER}
	labels := map[string]string{
		runtime.LabelPodName: pod.Name, runtime.LabelPodNamespace: pod.Namespace, runtime.LabelPodUID: string(pod.UID),
	}
	sandbox := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID)},
		LogDirectory: logDir,
		Labels:       labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    rt.CgroupParent(pod),
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: ns},
		},
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	} else {
		sandbox.Hostname = pod.Name
	}
	containerLabels := map[string]string{runtime.LabelContainerName: "main"}
	for k, v := range labels {
		containerLabels[k] = v
	}
	container := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
		Image:    &runtimeapi.ImageSpec{Image: env.BusyboxImage},
		Command:  pod.Spec.Containers[0].Command,
		LogPath:  "main/0.log",
		Labels:   containerLabels,
		Linux:    &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: ns}},
	}
	return sandbox, container
}

func runFloor(b *testing.B, ctx context.Context, cri *framework.CRI, sandbox *runtimeapi.PodSandboxConfig, container *runtimeapi.ContainerConfig) string {
	sb, err := cri.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandbox})
	if err != nil {
		b.Fatalf("RunPodSandbox: %v", err)
	}
	cc, err := cri.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: container, SandboxConfig: sandbox})
	if err != nil {
		b.Fatalf("CreateContainer: %v", err)
	}
	if _, err := cri.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		b.Fatalf("StartContainer: %v", err)
	}
	return cc.ContainerId
}

// reportPercentiles reports the median and 99th percentile in ms.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) time.Duration {
		i := int(p*float64(len(d))+0.5) - 1
		return d[min(max(i, 0), len(d)-1)]
	}
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(at(0.50)), "p50-ms")
	b.ReportMetric(ms(at(0.99)), "p99-ms")
	b.ReportMetric(float64(len(d)), "pods")
}
