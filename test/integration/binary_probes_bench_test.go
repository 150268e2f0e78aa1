package integration

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// BenchmarkBinaryProbes measures, on the built binary and the real
// containerd (run it once, it has fixed sizes):
//
//	go test -run '^$' -bench BenchmarkBinaryProbes -benchtime=1x -timeout 40m ./...
//
// ready-latency: the steps of a readiness probe's result changing, over
// 100 flips of a file an exec probe tests (period 1 s), from the pod's
// timeline (the agent's own times, internal/prober.Steps) and from the
// outside: due-to-ran, from the probe due to its outcome (the timer's
// lateness and the exec); result-to-status, from the outcome to the status
// the local API serves; result-to-localapi, to a client polling the local
// API every 2 ms seeing it; flip-to-localapi, from the file flipped to
// that, the wait for the next probe included (the period's, by design).
// ready-latency-connected adds, with the pod's mirror in the apiserver,
// result-to-apiserver (the status patch answered) and result-to-watch (an
// admin's watch showing the mirror's Ready changed); the kubelet shows a
// readiness change up to a sync later. cpu-*: the agent's CPU, and the
// runtime's (containerd, its shims and the pods), with
// NODEAGENT_BENCH_PODS (110) quiet pods, idle, each with an exec readiness
// probe at a 1 s period, and each with an httpGet, a tcpSocket or a grpc
// one.
func BenchmarkBinaryProbes(b *testing.B) {
	b.Run("ready-latency", func(b *testing.B) { benchReadyLatency(b, 100, false) })
	b.Run("ready-latency-connected", func(b *testing.B) { benchReadyLatency(b, 100, true) })
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

// The timeline's entries of a readiness change (internal/prober/steps.go):
// its steps in the agent, and its write to the apiserver.
var (
	shownEntry   = regexp.MustCompile(`(?s)^Readiness probe of "app"(?:: success| failed: .*); due [0-9:.]+, result after ([0-9.]+)ms, in the status ([0-9.]+)ms after it$`)
	writtenEntry = regexp.MustCompile(`(?s)^Readiness probe of "app"(?:: success| failed: .*): in the apiserver ([0-9.]+)ms after the result$`)
)

// readySteps are one change's steps, as the pod's timeline has them.
type readySteps struct {
	ran                  time.Time
	dueToRan, toStatus   time.Duration
	toAPIServer          time.Duration
	hasShown, hasWritten bool
}

func msDuration(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Millisecond))
}

// readyStepsSince reads from the pod's timeline the steps of the first
// readiness change recorded at or after since.
func readyStepsSince(entries []localapi.TimelineEntry, since time.Time) readySteps {
	var st readySteps
	for _, e := range entries {
		if e.Time.Before(since) {
			continue
		}
		if m := shownEntry.FindStringSubmatch(e.Message); m != nil && !st.hasShown {
			st = readySteps{hasShown: true, dueToRan: msDuration(m[1]), toStatus: msDuration(m[2])}
			st.ran = e.Time.Add(-st.toStatus)
		} else if m := writtenEntry.FindStringSubmatch(e.Message); m != nil && st.hasShown && !st.hasWritten {
			st.hasWritten, st.toAPIServer = true, msDuration(m[1])
		}
	}
	return st
}

// watchPodReady records when an admin's watch first showed the pod's Ready
// condition at each status.
type readyWatch struct {
	mu    sync.Mutex
	shown []readyShown
}

type readyShown struct {
	at    time.Time
	ready string
}

func watchPodReady(b *testing.B, name string) *readyWatch {
	w := &readyWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	wi, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer wi.Stop()
		last := ""
		for ev := range wi.ResultChan() {
			now := time.Now()
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			ready := ""
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					ready = string(c.Status)
				}
			}
			if ready != last {
				last = ready
				w.mu.Lock()
				w.shown = append(w.shown, readyShown{at: now, ready: ready})
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// since returns when the watch first showed ready at or after from.
func (w *readyWatch) since(from time.Time, ready string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.shown {
		if s.ready == ready && !s.at.Before(from) {
			return s.at, true
		}
	}
	return time.Time{}, false
}

func benchReadyLatency(b *testing.B, flips int, connected bool) {
	var h *agentHarness
	if connected {
		h = newConnectedAgent(b)
		waitNode(b, "Ready", 30*time.Second, isReady)
	} else {
		h = newAgent(b)
	}
	c := shContainer("app", sleepForever)
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	full := h.podName("lat")
	var watched *readyWatch
	if connected {
		watched = watchPodReady(b, full)
	}
	h.writeManifest(testPod("lat", c))
	h.waitPod("lat", "running", 60*time.Second, runningContainer("app"))
	id := h.runningIDs("lat")["app"]
	ctx := context.Background()
	// Not ready first: the file is not there yet.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		pods, err := h.client.Pods(ctx)
		if err == nil && slices.ContainsFunc(pods, func(p localapi.Pod) bool { return p.Name == full && podReady(p) == "False" }) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the pod not unready within 10s\n%s", h.log(20))
		}
	}
	var dueToRan, toStatus, toLocal, flipToLocal, toAPIServer, toWatch []time.Duration
	for i := range flips {
		want, cmd := "True", []string{"touch", "/tmp/ready"}
		if i%2 == 1 {
			want, cmd = "False", []string{"rm", "/tmp/ready"}
		}
		before := time.Now()
		execIn(b, h, id, cmd...)
		flipped := time.Now()
		var shown time.Time
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			pods, err := h.client.Pods(ctx)
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
		}
		var st readySteps
		var seen time.Time
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			d, err := h.client.Pod(ctx, metav1.NamespaceDefault, full)
			if err == nil {
				st = readyStepsSince(d.Timeline, before)
			}
			ok := st.hasShown
			if connected {
				var watchedOK bool
				seen, watchedOK = watched.since(before, want)
				ok = ok && st.hasWritten && watchedOK
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("flip %d: steps %+v in the timeline (watch seen %v) within 10s\n%s", i, st, seen, h.log(20))
			}
		}
		dueToRan = append(dueToRan, st.dueToRan)
		toStatus = append(toStatus, st.toStatus)
		toLocal = append(toLocal, shown.Sub(st.ran))
		flipToLocal = append(flipToLocal, shown.Sub(flipped))
		if connected {
			toAPIServer = append(toAPIServer, st.toAPIServer)
			toWatch = append(toWatch, seen.Sub(st.ran))
		}
	}
	reportNamed(b, "due-to-ran", dueToRan)
	reportNamed(b, "result-to-status", toStatus)
	reportNamed(b, "result-to-localapi", toLocal)
	reportNamed(b, "flip-to-localapi", flipToLocal)
	reportNamed(b, "result-to-apiserver", toAPIServer)
	reportNamed(b, "result-to-watch", toWatch)
	b.ReportMetric(float64(slicesMax(toLocal))/1e6, "result-to-localapi-max-ms")
	if connected {
		b.ReportMetric(float64(slicesMax(toAPIServer))/1e6, "result-to-apiserver-max-ms")
	}
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
