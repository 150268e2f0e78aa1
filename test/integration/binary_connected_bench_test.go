package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// BenchmarkBinaryConnected measures the agent as a Node of the real
// cluster: process start to Node Ready with the client certificate it
// already has (median of 5 starts, each after the Node was deleted) and
// from a bootstrap token (3 new nodes); the idle agent's CPU and RSS in connected
// mode, with no pods and with 110 quiet ones (static, so mirrored), and its
// apiserver requests per minute by verb and resource (from the audit log),
// over NODEAGENT_BENCH_IDLE (default 1m; the figures of record use 10m),
// beside the same agent standalone; NODEAGENT_BENCH_PROFILES=<dir> saves
// the idle agent's heap and CPU profiles and a 10 s execution trace there
// (<name>-heap.pb.gz, <name>-cpu.pb.gz, <name>-trace.out). Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryConnected -benchtime=1x -timeout 30m .
func BenchmarkBinaryConnected(b *testing.B) {
	b.Run("start-to-ready", benchStartToReady)
	b.Run("start-to-ready/bootstrap", benchBootstrapToReady)
	b.Run("idle", func(b *testing.B) { benchConnectedIdle(b, true, 0) })
	b.Run("idle-110-pods", func(b *testing.B) { benchConnectedIdle(b, true, 110) })
	b.Run("idle-standalone", func(b *testing.B) { benchConnectedIdle(b, false, 0) })
}

// benchBootstrapToReady starts agents with nothing but a bootstrap token.
func benchBootstrapToReady(b *testing.B) {
	tok := env.NewBootstrapToken(b, time.Hour)
	bootstrap := env.WriteBootstrapKubeconfig(b, tok)
	var took []time.Duration
	for range 3 {
		dir := b.TempDir()
		name := "bench" + randomSuffix()
		b.Cleanup(func() { deleteNodeTB(b, name) })
		ready := watchNamedReady(b, name)
		start := time.Now()
		h := newAgentNamed(b, name, "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--bootstrap-kubeconfig", bootstrap,
			"--cert-dir", filepath.Join(dir, "pki"))
		at := <-ready
		took = append(took, at.Sub(start))
		h.stop()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "ms-median")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "ms-max")
}

// benchStartToReady restarts an agent whose client certificate it got by
// bootstrap before, each time after its Node was deleted.
func benchStartToReady(b *testing.B) {
	tok := env.NewBootstrapToken(b, time.Hour)
	dir := b.TempDir()
	name := "bench" + randomSuffix()
	b.Cleanup(func() { deleteNodeTB(b, name) })
	ready := watchNamedReady(b, name)
	h := newAgentNamed(b, name, "--kubeconfig", filepath.Join(dir, "kubeconfig"),
		"--bootstrap-kubeconfig", env.WriteBootstrapKubeconfig(b, tok), "--cert-dir", filepath.Join(dir, "pki"))
	<-ready
	var took []time.Duration
	for range 5 {
		h.stop()
		deleteNodeTB(b, name)
		ready := watchNamedReady(b, name)
		start := time.Now()
		h.start()
		at := <-ready
		took = append(took, at.Sub(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "ms-median")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "ms-max")
}

// watchReady watches env's Node from now and sends when it is first seen
// Ready.
func watchReady(b *testing.B) <-chan time.Time { return watchNamedReady(b, env.NodeName) }

func watchNamedReady(b *testing.B, name string) <-chan time.Time {
	w, err := env.AdminClient.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector(metav1.ObjectNameField, name).String()})
	if err != nil {
		b.Fatal(err)
	}
	out := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		timeout := time.After(time.Minute)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if n, isNode := ev.Object.(*corev1.Node); isNode && ev.Type != watch.Deleted && isReady(n) {
					out <- time.Now()
					return
				}
			case <-timeout:
				return
			}
		}
	}()
	return out
}

// benchConnectedIdle measures an agent with n quiet pods, connected or (for
// comparison) standalone.
func benchConnectedIdle(b *testing.B, connected bool, n int) {
	window := time.Minute
	if v := os.Getenv("NODEAGENT_BENCH_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("NODEAGENT_BENCH_IDLE: %v", err)
		}
		window = d
	}
	kubeconfig := writeKubeconfig(b, env.NodeConfig, b.TempDir())
	deleteNodeTB(b, env.NodeName)
	b.Cleanup(func() { deleteNodeTB(b, env.NodeName) })
	// A port of its own for the node API: the machine's 10250 may be
	// another kubelet's.
	args := []string{"--port", strconv.Itoa(int(freeTCPPort(b)))}
	if connected {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	profiles := os.Getenv("NODEAGENT_BENCH_PROFILES")
	if profiles != "" {
		args = append(args, "--profiling")
	}
	ready := watchReady(b)
	h := newAgentNamed(b, env.NodeName, args...)
	if connected {
		<-ready
	}
	for i := range n {
		h.writeManifest(testPod(fmt.Sprintf("idle-%d", i), shContainer("main", "while true; do sleep 10; done")))
	}
	waitAllRunning(b, h, n, 10*time.Minute, time.Second)
	// Settle: the agent gives back its executable's start-up pages 10 s
	// after it is first ready; idle is what follows.
	time.Sleep(15 * time.Second)
	pid := h.proc.Process.Pid
	var sum rssSample
	var peak float64
	samples := 0
	cpu0, t0 := cpuTicks(b, pid), time.Now()
	for time.Since(t0) < window {
		time.Sleep(time.Second)
		s := rssOf(b, pid)
		sum = rssSample{sum.total + s.total, sum.anon + s.anon, sum.file + s.file}
		peak = max(peak, s.total)
		samples++
	}
	cpu1, el := cpuTicks(b, pid), time.Since(t0)
	const hz = 100 // USER_HZ on Linux
	b.ReportMetric(float64(cpu1-cpu0)/hz/el.Seconds()*100, "cpu-%")
	b.ReportMetric(sum.total/float64(samples), "rss-MiB")
	b.ReportMetric(peak, "rss-max-MiB")
	b.ReportMetric(sum.anon/float64(samples), "rss-anon-MiB")
	b.ReportMetric(sum.file/float64(samples), "rss-file-MiB")
	if profiles != "" {
		name := strings.ReplaceAll(b.Name(), "/", "-")
		for _, f := range [][2]string{{"heap.pb.gz", "heap"}, {"heap.txt", "heap?debug=1"}, {"goroutine.txt", "goroutine?debug=1"},
			{"cpu.pb.gz", "profile?seconds=60"}, {"trace.out", "trace?seconds=10"}} {
			saveProfile(b, "http://"+h.addr+"/debug/pprof/"+f[1], filepath.Join(profiles, name+"-"+f[0]))
		}
	}
	if connected {
		reportRequests(b, "system:node:"+env.NodeName, t0, time.Now())
	}
	if connected && !isReady(waitNodeTB(b)) {
		b.Errorf("the Node is not Ready after the idle window")
	}
}

// reportRequests reports user's requests per minute in [from, to), by verb
// and resource, from the apiserver's audit log; a watch counts when it
// starts.
func reportRequests(b *testing.B, user string, from, to time.Time) {
	events, err := env.AuditEvents()
	if err != nil {
		b.Fatal(err)
	}
	perVerb := map[string]int{}
	for k, n := range framework.CountRequests(events, from, to) {
		if k.User == user {
			perVerb[k.Verb+"-"+strings.ReplaceAll(k.Resource, "/", "-")] += n
		}
	}
	minutes := to.Sub(from).Minutes()
	total := 0
	for key, n := range perVerb {
		b.ReportMetric(float64(n)/minutes, key+"/min")
		total += n
	}
	b.ReportMetric(float64(total)/minutes, "requests/min")
}
