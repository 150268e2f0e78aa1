package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkBinaryAgent measures the nodeagent binary end to end against
// the real containerd, the CRI polled every 10 ms: manifest written ->
// container RUNNING (30 pods one at a time, host and pod network), 50
// manifests at once -> all RUNNING, edit -> new container RUNNING, removal
// -> container stopped, and the agent's RSS and CPU with 110 idle pods.
// Compare with BenchmarkRuntimeStartPod/CRI-floor. Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryAgent -benchtime=1x -timeout 30m ./...
func BenchmarkBinaryAgent(b *testing.B) {
	// Each sub-benchmark runs its fixed number of pods once, whatever b.N.
	b.Run("one-at-a-time/host-network", func(b *testing.B) { benchOneAtATime(b, true, 30) })
	b.Run("one-at-a-time/pod-network", func(b *testing.B) { benchOneAtATime(b, false, 30) })
	b.Run("burst-50", func(b *testing.B) { benchBurst(b, 50) })
	b.Run("idle-110", func(b *testing.B) { benchIdle(b, 110) })
}

// waitRunning polls the CRI until the pod has a running container other
// than not, and returns its ID.
func waitRunning(b *testing.B, h *agentHarness, name, not string, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		for _, c := range h.containers(name, true) {
			if c.Id != not {
				return c.Id
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("pod %s: no new running container within %v\n%s", name, timeout, h.log(20))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func benchOneAtATime(b *testing.B, hostNetwork bool, n int) {
	h := newAgent(b)
	var start, edit, remove []time.Duration
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("one-%d", i)
		pod := testPod(name, shContainer("main", sleepForever))
		pod.Spec.HostNetwork = hostNetwork
		t0 := time.Now()
		h.writeManifest(pod)
		id := waitRunning(b, h, name, "", time.Minute)
		start = append(start, time.Since(t0))

		if i < 10 { // edits and removals: the first ten pods
			pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, envVar("GEN", "2"))
			t0 = time.Now()
			h.writeManifest(pod)
			waitRunning(b, h, name, id, time.Minute)
			edit = append(edit, time.Since(t0))
		}
	}
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("one-%d", i)
		t0 := time.Now()
		h.removeManifest(name)
		for len(h.containers(name, true)) > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		remove = append(remove, time.Since(t0))
	}
	reportNamed(b, "start", start)
	reportNamed(b, "edit", edit)
	reportNamed(b, "remove", remove)
}

func benchBurst(b *testing.B, n int) {
	h := newAgent(b)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		h.writeManifest(testPod(fmt.Sprintf("burst-%d", i), shContainer("main", sleepForever)))
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err == nil && countSuffix(resp.Containers, "-"+h.node) == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not all %d pods running within 5m", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.ReportMetric(float64(time.Since(t0).Milliseconds()), "all-running-ms")
}

func countSuffix(cs []*runtimeapi.Container, suffix string) int {
	n := 0
	for _, c := range cs {
		if strings.HasSuffix(c.Labels["io.kubernetes.pod.name"], suffix) {
			n++
		}
	}
	return n
}

func benchIdle(b *testing.B, n int) {
	h := newAgent(b)
	for i := 0; i < n; i++ {
		h.writeManifest(testPod(fmt.Sprintf("idle-%d", i), shContainer("main", "while true; do sleep 10; done")))
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err == nil && countSuffix(resp.Containers, "-"+h.node) == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not all %d pods running within 10m", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // settle
	pid := h.proc.Process.Pid
	cpu0, t0 := cpuTicks(b, pid), time.Now()
	time.Sleep(30 * time.Second)
	cpu1, el := cpuTicks(b, pid), time.Since(t0)
	const hz = 100 // USER_HZ on Linux
	b.ReportMetric(float64(cpu1-cpu0)/hz/el.Seconds()*100, "cpu-%")
	b.ReportMetric(float64(rssKiB(b, pid))/1024, "rss-MiB")
}

func cpuTicks(b *testing.B, pid int) int64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

func rssKiB(b *testing.B, pid int) int64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return v
		}
	}
	return 0
}

// reportNamed reports the p50 and p99 of d in ms under a prefix.
func reportNamed(b *testing.B, prefix string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sorted := slices.Sorted(slices.Values(d))
	at := func(p float64) time.Duration {
		return sorted[min(max(int(p*float64(len(sorted))+0.5)-1, 0), len(sorted)-1)]
	}
	b.ReportMetric(float64(at(0.5))/1e6, prefix+"-p50-ms")
	b.ReportMetric(float64(at(0.99))/1e6, prefix+"-p99-ms")
}
