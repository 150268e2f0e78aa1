package integration

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkBinaryProbes measures, on the built binary and the real
// containerd (run it once, it has fixed sizes):
//
//	go test -run '^$' -bench BenchmarkBinaryProbes -benchtime=1x -timeout 40m ./...
//
// ready-latency: from a readiness probe's result changing in the agent (its
// "Probe result changed" log line) to the local API showing the pod's Ready
// condition changed, over 40 flips of a file an exec probe tests; the
// kubelet shows it up to a sync later. cpu-*: the agent's CPU, and the
// runtime's (containerd, its shims and the pods), with
// NODEAGENT_BENCH_PODS (110) quiet pods, idle, each with an exec readiness
// probe at a 1 s period, and each with an httpGet, a tcpSocket or a grpc
// one.
func BenchmarkBinaryProbes(b *testing.B) {
	b.Run("ready-latency", func(b *testing.B) { benchReadyLatency(b, 40) })
	n := 110
	if v, err := strconv.Atoi(os.Getenv("NODEAGENT_BENCH_PODS")); err == nil && v > 0 {
		n = v
	}
	b.Run("cpu-idle", func(b *testing.B) { benchProbeCPU(b, n, "") })
	b.Run("cpu-exec-readiness", func(b *testing.B) { benchProbeCPU(b, n, "exec") })
	b.Run("cpu-httpget-readiness", func(b *testing.B) { benchProbeCPU(b, n, "httpGet") })
	b.Run("cpu-tcp-readiness", func(b *testing.B) { benchProbeCPU(b, n, "tcpSocket") })
	b.Run("cpu-grpc-readiness", func(b *testing.B) { benchProbeCPU(b, n, "grpc") })
}

// resultLine is the agent's log line of a probe result changing; its
// klog header has the time of day to the microsecond.
var resultLine = regexp.MustCompile(`(?m)^[IWE](\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) .*"Probe result changed".*pod="default/([^"]+)".*result="?([a-z]+)"?`)

func benchReadyLatency(b *testing.B, flips int) {
	h := newAgent(b)
	c := shContainer("app", sleepForever)
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	h.writeManifest(testPod("lat", c))
	h.waitPod("lat", "running", 60*time.Second, runningContainer("app"))
	id := h.runningIDs("lat")["app"]
	full := h.podName("lat")
	logPath := filepath.Join(h.dir, fmt.Sprintf("agent-%d.log", h.starts))
	var lat []time.Duration
	seen := 0
	for i := range flips {
		want, cmd := "True", []string{"touch", "/tmp/ready"}
		if i%2 == 1 {
			want, cmd = "False", []string{"rm", "/tmp/ready"}
		}
		execIn(b, h, id, cmd...)
		var shown time.Time
		deadline := time.Now().Add(10 * time.Second)
		for {
			pods, err := h.client.Pods(context.Background())
			if err == nil {
				for _, p := range pods {
					if p.Name == full && podReady(p) == want {
						shown = time.Now()
					}
				}
			}
			if !shown.IsZero() {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("flip %d: Ready not %s within 10s\n%s", i, want, h.log(20))
			}
			time.Sleep(2 * time.Millisecond)
		}
		data, err := os.ReadFile(logPath)
		if err != nil {
			b.Fatal(err)
		}
		lines := resultLine.FindAllStringSubmatch(string(data), -1)
		if len(lines) <= seen {
			b.Fatalf("flip %d: no new \"Probe result changed\" line in the agent's log", i)
		}
		last := lines[len(lines)-1]
		seen = len(lines)
		changed, err := time.ParseInLocation("0102 15:04:05.000000", last[1], time.Local)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		changed = changed.AddDate(now.Year(), 0, 0)
		lat = append(lat, shown.Sub(changed))
	}
	reportNamed(b, "result-to-ready", lat)
	b.ReportMetric(float64(slicesMax(lat))/1e6, "result-to-ready-max-ms")
}

func freeTCPPort(tb testing.TB) int32 {
	_, p, _ := net.SplitHostPort(freeAddress(tb))
	n, _ := strconv.Atoi(p)
	return int32(n)
}

func slicesMax(d []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, v := range d {
		m = max(m, v)
	}
	return m
}

// benchProbeCPU reports the agent's CPU over 30 s with n running pods
// whose one container has a readiness probe of the given kind at a 1 s
// period ("" for none), all of them ready.
//
// With NODEAGENT_BENCH_PROFILES=<dir> the agent runs with --profiling, and
// a 20 s CPU profile of the window is saved as <dir>/cpu-<kind>.pb.gz
// (cpu-idle.pb.gz without probes), and after it a 10 s execution trace as
// <dir>/trace-<kind>.out (go tool trace: its goroutines page gives each
// kind of goroutine's own CPU time, exactly rather than sampled).
func benchProbeCPU(b *testing.B, n int, kind string) {
	profiles := os.Getenv("NODEAGENT_BENCH_PROFILES")
	var args []string
	if profiles != "" {
		args = append(args, "--profiling")
	}
	h := newAgent(b, args...)
	// Quiet containers, so that the runtime's CPU is mostly the probes'.
	const quiet = "while true; do sleep 10; done"
	for i := range n {
		script := quiet
		c := shContainer("main", "")
		switch kind {
		case "exec":
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		case "httpGet", "tcpSocket":
			port := freeTCPPort(b)
			script = fmt.Sprintf("mkdir -p /tmp/www && echo ok > /tmp/www/index.html && busybox httpd -f -p 127.0.0.1:%d -h /tmp/www & %s", port, quiet)
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/index.html", Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}}}
			if kind == "tcpSocket" {
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
					Host: "127.0.0.1", Port: intstr.FromInt32(port)}}}
			}
		case "grpc":
			port := freeTCPPort(b)
			c = grpcHealthContainer("main", port, "touch /tmp/healthy", "-file", "/tmp/healthy")
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port}}}
		}
		if c.ReadinessProbe != nil {
			p := c.ReadinessProbe
			p.PeriodSeconds, p.TimeoutSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 1, 1, 3
		}
		name := fmt.Sprintf("probe-%d", i)
		if kind == "grpc" {
			h.writeManifest(grpcHealthPod(b, name, true, c))
			continue
		}
		c.Command[2] = "trap 'exit 0' TERM; " + script
		h.writeManifest(testPod(name, c))
	}
	waitAllRunning(b, h, n, 10*time.Minute, 200*time.Millisecond)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		pods, err := h.client.Pods(context.Background())
		ready := 0
		for _, p := range pods {
			if podReady(p) == "True" {
				ready++
			}
		}
		if err == nil && ready == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d pods ready after 5 minutes", ready, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // settle
	pid := h.proc.Process.Pid
	probes0, failed0 := h.metricWith(b, "prober_probe_total"), h.metricWith(b, "prober_probe_total", `result="failed"`)
	rt0 := runtimeCPU(b)
	cpu0, t0 := cpuTicks(b, pid), time.Now()
	if profiles != "" {
		name := cmp.Or(kind, "idle")
		saveProfile(b, "http://"+h.addr+"/debug/pprof/profile?seconds=20", filepath.Join(profiles, "cpu-"+name+".pb.gz"))
	}
	time.Sleep(time.Until(t0.Add(30 * time.Second)))
	cpu1, el := cpuTicks(b, pid), time.Since(t0)
	rt1 := runtimeCPU(b)
	probes1, failed1 := h.metricWith(b, "prober_probe_total"), h.metricWith(b, "prober_probe_total", `result="failed"`)
	const hz = 100 // USER_HZ on Linux
	b.ReportMetric(float64(cpu1-cpu0)/hz/el.Seconds()*100, "cpu-%")
	b.ReportMetric((rt1-rt0).Seconds()/el.Seconds()*100, "runtime-cpu-%")
	b.ReportMetric((probes1-probes0)/el.Seconds(), "probes/s")
	b.ReportMetric((failed1-failed0)/el.Seconds(), "failed/s")
	b.ReportMetric(rssOf(b, pid).total, "rss-MiB")
	if profiles != "" { // after the window: tracing costs CPU
		saveProfile(b, "http://"+h.addr+"/debug/pprof/trace?seconds=10", filepath.Join(profiles, "trace-"+cmp.Or(kind, "idle")+".out"))
	}
}

// runtimeCPU is the CPU the container runtime has used: containerd and
// its shims with their waited-for children (runc), and every pod's cgroup
// under the agent's default cgroup root (what runs in the containers,
// exec'd probe commands included).
func runtimeCPU(b *testing.B) time.Duration {
	const hz = 100 // USER_HZ on Linux
	var ticks int64
	procs, err := filepath.Glob("/proc/[0-9]*/comm")
	if err != nil {
		b.Fatal(err)
	}
	for _, comm := range procs {
		name, err := os.ReadFile(comm)
		if err != nil || !strings.HasPrefix(string(name), "containerd") {
			continue // gone meanwhile, or not the runtime's
		}
		ticks += cpuTicksWithChildren(filepath.Dir(comm))
	}
	usage, err := os.ReadFile("/sys/fs/cgroup/cpuacct/nodeagent/cpuacct.usage")
	if err != nil {
		b.Fatalf("the pods' CPU: %v", err)
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(string(usage)), 10, 64)
	return time.Duration(ticks)*time.Second/hz + time.Duration(ns)
}

// cpuTicksWithChildren is utime+stime+cutime+cstime of /proc/<pid>, or 0
// if it is gone.
func cpuTicksWithChildren(dir string) int64 {
	st, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	var sum int64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return sum
}
