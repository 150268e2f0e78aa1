package integration

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkManifestctlApplyWait compares manifestctl apply --wait, from
// invocation to exit (the process's start included), with the agent's own
// time from a manifest written to its container RUNNING in the CRI (polled
// every 10 ms, as BenchmarkBinaryAgent does), one simple host-network pod
// at a time. apply --wait runs with --settle 0 (exit as soon as the agent
// reports the container running) and with its default (the container seen
// 15 ms with its process watched by the agent, so that one that exits at
// once fails the wait; see BenchmarkCrashVisibleAfterRunning).
// Each measurement starts from the same node, its pod removed after it,
// and each round takes the three in another order. Run it once:
//
//	go test -run '^$' -bench BenchmarkManifestctlApplyWait -benchtime=1x -timeout 20m .
func BenchmarkManifestctlApplyWait(b *testing.B) {
	const rounds = 30
	h := newAgent(b)
	m := newMctl(b, h)
	took := map[string][]time.Duration{}
	measure := map[string]func(name string) time.Duration{
		"agent": func(name string) time.Duration {
			start := time.Now()
			h.writeManifest(testPod(name, shContainer("c", benchForever)))
			if _, _, err := pollRunning(h.cri, h.podName(name), "", 30*time.Second); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, h.log(20))
			}
			return time.Since(start)
		},
		"settle0": func(name string) time.Duration {
			return m.must(0, "apply", "--wait", "--settle", "0", m.writeFile(name+".yaml", testPod(name, shContainer("c", benchForever)))).took
		},
		"default": func(name string) time.Duration {
			return m.must(0, "apply", "--wait", m.writeFile(name+".yaml", testPod(name, shContainer("c", benchForever)))).took
		},
	}
	order := []string{"agent", "settle0", "default"}
	for i := 0; i < rounds; i++ {
		for j := range order {
			kind := order[(i+j)%len(order)]
			name := fmt.Sprintf("%s%d", kind, i)
			took[kind] = append(took[kind], measure[kind](name))
			m.must(0, "rm", "--wait", name)
		}
	}
	a, s0, sd := median(took["agent"]), median(took["settle0"]), median(took["default"])
	b.ReportMetric(float64(a.Milliseconds()), "agent-manifest-to-running-ms")
	b.ReportMetric(float64(s0.Milliseconds()), "apply-wait-settle0-ms")
	b.ReportMetric(float64(sd.Milliseconds()), "apply-wait-default-ms")
	b.ReportMetric(float64((sd - a).Milliseconds()), "apply-wait-default-over-agent-ms")
	b.Logf("medians of %d rounds: agent manifest->RUNNING %v; apply --wait --settle 0 %v (%+v); apply --wait %v (%+v)\n  agent %v\n  settle0 %v\n  default %v",
		rounds, a, s0, s0-a, sd, sd-a, took["agent"], took["settle0"], took["default"])
}
