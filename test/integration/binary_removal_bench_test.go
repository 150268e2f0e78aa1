package integration

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkBinaryRemoval times manifest removal -> no container of the pod
// running, for pods whose container ignores SIGTERM (a shell as PID 1
// without a trap), so that only the grace period decides when it stops:
// with 0 it must be killed at once (the kubelet v1.33 took 2.06 s, as it
// never kills with less than 2 s), with 1 after one second. Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryRemoval -benchtime=1x ./...
//
// With NODEAGENT_BASELINE_BIN set, it compares this tree's agent with that
// one, round by round (binary_ab_test.go).
func BenchmarkBinaryRemoval(b *testing.B) {
	for _, grace := range []int64{0, 1} {
		measure(b, fmt.Sprintf("grace-%d", grace), 3, func(b *testing.B, bin string) figures { return benchRemoval(b, bin, grace, 10) })
	}
}

// benchRemoval starts n pods that ignore SIGTERM on agent bin, removes
// them one at a time, and returns the removals' p50 and p99.
func benchRemoval(b *testing.B, bin string, grace int64, n int) figures {
	h := newBenchAgent(b, bin)
	for i := 0; i < n; i++ {
		pod := testPod(fmt.Sprintf("rm-%d", i), corev1.Container{
			Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"sh", "-c", benchForever}, // no trap: TERM is ignored
		})
		pod.Spec.TerminationGracePeriodSeconds = &grace
		h.writeManifest(pod)
	}
	waitAllRunning(b, h, n, 2*time.Minute, 50*time.Millisecond)
	var removal []time.Duration
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("rm-%d", i)
		t0 := time.Now()
		h.removeManifest(name)
		for len(h.containers(name, true)) > 0 {
			if time.Since(t0) > time.Minute {
				b.Fatalf("%s: still running a minute after its manifest was removed", name)
			}
			time.Sleep(5 * time.Millisecond)
		}
		removal = append(removal, time.Since(t0))
	}
	return percentiles("remove", removal)
}
