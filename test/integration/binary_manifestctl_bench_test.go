package integration

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkManifestctlApplyWait compares manifestctl apply --wait, from
// invocation to exit (the process's start included), with the agent's own
// time from a manifest written to its container RUNNING in the CRI (polled
// every 10 ms, as BenchmarkBinaryAgent does), alternating, one simple
// host-network pod at a time. apply --wait runs with --settle 0 (exit as
// soon as the agent reports the container running) and with its default
// (the container seen running for one relist interval and 200 ms, so that
// one that exits at once fails the wait). Run it once:
//
//	go test -run '^$' -bench BenchmarkManifestctlApplyWait -benchtime=1x -timeout 20m .
func BenchmarkManifestctlApplyWait(b *testing.B) {
	const rounds = 10
	h := newAgent(b)
	m := newMctl(b, h)
	var agent, settle0, settleDefault []time.Duration
	for i := 0; i < rounds; i++ {
		direct := testPod(fmt.Sprintf("direct%d", i), shContainer("c", benchForever))
		start := time.Now()
		h.writeManifest(direct)
		if _, _, err := pollRunning(h.cri, h.podName(direct.Name), "", 30*time.Second); err != nil {
			b.Fatalf("%s: %v\n%s", direct.Name, err, h.log(20))
		}
		agent = append(agent, time.Since(start))

		fast := testPod(fmt.Sprintf("fast%d", i), shContainer("c", benchForever))
		r := m.must(0, "apply", "--wait", "--settle", "0", m.writeFile(fast.Name+".yaml", fast))
		settle0 = append(settle0, r.took)

		def := testPod(fmt.Sprintf("default%d", i), shContainer("c", benchForever))
		r = m.must(0, "apply", "--wait", m.writeFile(def.Name+".yaml", def))
		settleDefault = append(settleDefault, r.took)
	}
	a, s0, sd := median(agent), median(settle0), median(settleDefault)
	b.ReportMetric(float64(a.Milliseconds()), "agent-manifest-to-running-ms")
	b.ReportMetric(float64(s0.Milliseconds()), "apply-wait-settle0-ms")
	b.ReportMetric(float64(sd.Milliseconds()), "apply-wait-default-ms")
	b.ReportMetric(float64((s0 - a).Milliseconds()), "apply-wait-settle0-over-agent-ms")
	b.Logf("medians of %d rounds: agent manifest->RUNNING %v; apply --wait --settle 0 %v (%+v); apply --wait %v (%+v)\n  agent %v\n  settle0 %v\n  default %v",
		rounds, a, s0, s0-a, sd, sd-a, agent, settle0, settleDefault)
}
