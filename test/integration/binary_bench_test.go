package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// BenchmarkBinaryAgent measures the nodeagent binary end to end against
// the real containerd, the CRI polled every 10 ms: manifest written ->
// container RUNNING (30 pods one at a time, host and pod network), 50
// manifests at once -> all RUNNING, edit -> new container RUNNING, removal
// -> container stopped, and the agent's RSS and CPU with 110 idle pods.
// The floor/ sub-benchmarks make the same pods' three CRI calls
// (RunPodSandbox, CreateContainer, StartContainer) directly, under the same
// conditions: the same workload, earlier pods left running, as many calls
// at once as the agent may make (one per pod), and RUNNING detected by the
// same CRI polling. Compare the agent with them; burst-50 alternates
// three rounds of each and reports the ratio of the medians. Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryAgent -benchtime=1x -timeout 30m ./...
//
// With NODEAGENT_BASELINE_BIN set, every sub-benchmark but the floor's
// compares this tree's agent with that one instead, round by round
// (binary_ab_test.go; hack/bench-ab.sh COMMIT builds a commit's agent and
// runs them).
func BenchmarkBinaryAgent(b *testing.B) {
	// Each sub-benchmark runs its fixed number of pods once, whatever b.N.
	ab := baselineBinary() != ""
	for _, hostNetwork := range []bool{true, false} {
		network := map[bool]string{true: "host-network", false: "pod-network"}[hostNetwork]
		measure(b, "one-at-a-time/"+network, 3, func(b *testing.B, bin string) figures { return benchOneAtATime(b, bin, hostNetwork, 30) })
		if !ab { // the floor is no build's: the same for both
			b.Run("floor/one-at-a-time/"+network, func(b *testing.B) { benchFloorOneAtATime(b, hostNetwork, 30) })
		}
	}
	if ab {
		measure(b, "burst-50", 5, func(b *testing.B, bin string) figures {
			return figures{{"all-running-ms", float64(benchBurstOf(b, bin, 50).Milliseconds())}}
		})
	} else {
		b.Run("burst-50", func(b *testing.B) { benchBurstAgainstFloor(b, 50, 3) })
	}
	measure(b, "idle-110", 2, func(b *testing.B, bin string) figures { return benchIdle(b, bin, 110) })
}

// waitRunning polls the CRI until the pod has a running container other
// than not, and returns its ID.
func waitRunning(b *testing.B, h *agentHarness, name, not string, timeout time.Duration) string {
	id, _ := waitRunningAfterStop(b, h, name, not, timeout)
	return id
}

// waitRunningAfterStop is waitRunning that also returns when the CRI was
// first seen not running the container not (the time of the first poll if
// it never was).
func waitRunningAfterStop(b *testing.B, h *agentHarness, name, not string, timeout time.Duration) (string, time.Time) {
	id, stopped, err := pollRunning(h.cri, h.podName(name), not, timeout)
	if err != nil {
		b.Fatalf("pod %s: %v\n%s", name, err, h.log(20))
	}
	return id, stopped
}

// pollRunning polls the CRI every 10 ms until the pod named podName (its
// full name) runs a container other than not.
func pollRunning(cri *framework.CRI, podName, not string, timeout time.Duration) (string, time.Time, error) {
	deadline := time.Now().Add(timeout)
	var stopped time.Time
	for {
		resp, err := cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{"io.kubernetes.pod.name": podName},
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err != nil {
			return "", stopped, fmt.Errorf("ListContainers: %w", err)
		}
		now, oldRuns := time.Now(), false
		for _, c := range resp.Containers {
			if c.Id == not {
				oldRuns = true
			}
		}
		if !oldRuns && stopped.IsZero() {
			stopped = now
		}
		for _, c := range resp.Containers {
			if c.Id != not {
				return c.Id, stopped, nil
			}
		}
		if now.After(deadline) {
			return "", stopped, fmt.Errorf("no new running container within %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// benchForever is the benchmarks' workload: it idles in a background
// sleep and waits for it, so that SIGTERM ends it at once (sleepForever's
// shell runs the trap only once its 0.2 s sleep ends, which would put up to
// 200 ms of noise into every stop).
const benchForever = "while true; do sleep 1 & wait $!; done"

// benchOneAtATime starts n pods one at a time on agent bin, edits and
// removes the first ten, and returns the times' p50 and p99.
func benchOneAtATime(b *testing.B, bin string, hostNetwork bool, n int) figures {
	h := newBenchAgent(b, bin)
	var start, edit, afterStop, remove []time.Duration
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("one-%d", i)
		pod := testPod(name, shContainer("main", benchForever))
		pod.Spec.HostNetwork = hostNetwork
		t0 := time.Now()
		h.writeManifest(pod)
		id := waitRunning(b, h, name, "", time.Minute)
		start = append(start, time.Since(t0))

		if i < 10 { // edits and removals: the first ten pods
			pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, envVar("GEN", "2"))
			t0 = time.Now()
			h.writeManifest(pod)
			_, stopped := waitRunningAfterStop(b, h, name, id, time.Minute)
			edit = append(edit, time.Since(t0))
			afterStop = append(afterStop, time.Since(stopped))
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
	return slices.Concat(percentiles("start", start), percentiles("edit", edit),
		// From the old generation seen stopped to the new one seen running.
		percentiles("edit-after-stop", afterStop), percentiles("remove", remove))
}

// benchBurstAgainstFloor alternates rounds of n manifests written at once
// with rounds of the floor's n pods started at once, and reports the
// medians and their ratio (sub-benchmark "median"). One pair is not enough
// to tell 1.1x apart: on this machine either side's time moves by 10-20%
// from one run to the next. Each round is a sub-benchmark of its own, so
// its pods are gone before the next starts.
func benchBurstAgainstFloor(b *testing.B, n, rounds int) {
	var agent, floor []time.Duration
	for r := range rounds {
		b.Run(fmt.Sprintf("agent-%d", r), func(b *testing.B) { agent = append(agent, benchBurst(b, n)) })
		b.Run(fmt.Sprintf("floor-%d", r), func(b *testing.B) { floor = append(floor, benchFloorBurst(b, n)) })
	}
	b.Run("median", func(b *testing.B) {
		if len(agent) < rounds || len(floor) < rounds {
			b.Fatalf("%d agent and %d floor rounds finished, want %d each", len(agent), len(floor), rounds)
		}
		a, f := median(agent), median(floor)
		b.ReportMetric(float64(a.Milliseconds()), "agent-all-running-ms")
		b.ReportMetric(float64(f.Milliseconds()), "floor-all-running-ms")
		b.ReportMetric(float64(a)/float64(f), "agent/floor")
	})
}

// benchBurst writes n manifests at once to an agent started with args and
// returns the time until all n containers run.
func benchBurst(b *testing.B, n int, args ...string) time.Duration {
	return benchBurstOf(b, "", n, args...)
}

// benchBurstOf is benchBurst on agent bin (empty: this tree's).
func benchBurstOf(b *testing.B, bin string, n int, args ...string) time.Duration {
	h := newBenchAgent(b, bin, args...)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		h.writeManifest(testPod(fmt.Sprintf("burst-%d", i), shContainer("main", benchForever)))
	}
	waitAllRunning(b, h, n, 5*time.Minute, 20*time.Millisecond)
	took := time.Since(t0)
	b.ReportMetric(float64(took.Milliseconds()), "all-running-ms")
	return took
}

func median(d []time.Duration) time.Duration {
	return slices.Sorted(slices.Values(d))[len(d)/2]
}

// waitAllRunning polls the CRI every poll until n containers of this
// agent's node are running, failing after timeout.
func waitAllRunning(b *testing.B, h *agentHarness, n int, timeout, poll time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err == nil && countSuffix(resp.Containers, "-"+h.node) == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("not all %d pods running within %v", n, timeout)
		}
		time.Sleep(poll)
	}
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

// benchIdle returns agent bin's CPU and memory over 30 s with n idle pods.
// With NODEAGENT_BENCH_PROFILES=<dir> the agent runs with --profiling, and
// its heap, goroutine and (20 s of) CPU profiles are saved in dir once
// measured (go tool pprof -sample_index=inuse_space <dir>/heap.pb.gz), and
// the heap profile as text, which ends with the runtime's MemStats
// (heap.txt); with a baseline, in a directory per round under dir.
func benchIdle(b *testing.B, bin string, n int) figures {
	profiles := os.Getenv("NODEAGENT_BENCH_PROFILES")
	var args []string
	if profiles != "" {
		args = append(args, "--profiling")
		profiles = abProfileDir(b, profiles)
	}
	h := newBenchAgent(b, bin, args...)
	for i := 0; i < n; i++ {
		h.writeManifest(testPod(fmt.Sprintf("idle-%d", i), shContainer("main", "while true; do sleep 10; done")))
	}
	waitAllRunning(b, h, n, 10*time.Minute, 100*time.Millisecond)
	time.Sleep(5 * time.Second) // settle
	pid := h.proc.Process.Pid
	// RSS saws up and down with the heap between collections: it is
	// sampled every second of the window, and its mean (what one reading
	// at a random moment estimates, with less noise) and peak reported.
	var sum rssSample
	var peak float64
	cpu0, t0 := cpuTicks(b, pid), time.Now()
	const samples = 30
	for range samples {
		time.Sleep(time.Second)
		s := rssOf(b, pid)
		sum = rssSample{sum.total + s.total, sum.anon + s.anon, sum.file + s.file}
		peak = max(peak, s.total)
	}
	cpu1, el := cpuTicks(b, pid), time.Since(t0)
	const hz = 100 // USER_HZ on Linux
	if profiles != "" {
		for file, p := range map[string]string{"heap.pb.gz": "heap", "goroutine.pb.gz": "goroutine", "heap.txt": "heap?debug=1", "cpu.pb.gz": "profile?seconds=20"} {
			saveProfile(b, "http://"+h.addr+"/debug/pprof/"+p, filepath.Join(profiles, file))
		}
	}
	return figures{
		{"cpu-%", float64(cpu1-cpu0) / hz / el.Seconds() * 100},
		{"rss-MiB", sum.total / samples},
		{"rss-max-MiB", peak},
		// Anonymous memory (heap, stacks) and the binary's mapped pages apart.
		{"rss-anon-MiB", sum.anon / samples},
		{"rss-file-MiB", sum.file / samples},
	}
}

// rssSample is a process's resident memory in MiB: all of it, anonymous,
// and mapped from files.
type rssSample struct{ total, anon, file float64 }

func rssOf(b *testing.B, pid int) rssSample {
	st := procStatus(b, pid)
	return rssSample{float64(st["VmRSS"]) / 1024, float64(st["RssAnon"]) / 1024, float64(st["RssFile"]) / 1024}
}

// saveProfile writes what url serves to path.
func saveProfile(b *testing.B, url, path string) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

func cpuTicks(b testing.TB, pid int) int64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// procStatus returns the kB fields of /proc/<pid>/status.
func procStatus(b *testing.B, pid int) map[string]int64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(st), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "kB" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			out[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	return out
}

// reportNamed reports the p50 and p99 of d in ms under a prefix.
func reportNamed(b *testing.B, prefix string, d []time.Duration) {
	percentiles(prefix, d).report(b)
}

// percentiles are the p50 and p99 of d in ms under a prefix (none if d is
// empty).
func percentiles(prefix string, d []time.Duration) figures {
	if len(d) == 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(d))
	at := func(p float64) time.Duration {
		return sorted[min(max(int(p*float64(len(sorted))+0.5)-1, 0), len(sorted)-1)]
	}
	return figures{{prefix + "-p50-ms", float64(at(0.5)) / 1e6}, {prefix + "-p99-ms", float64(at(0.99)) / 1e6}}
}
