package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// BenchmarkCrashVisibleAfterRunning measures, for a container that exits at
// once (exit 1, restartPolicy Always), how long the local API shows it
// running: until it shows the process exited (the agent's exit watch),
// and until it shows the exit code (the runtime recorded the exit). Polled
// every millisecond from the manifest's write. It also shows, for the
// containers the local API showed with their process watched before the
// exit, how long after that the exit showed. The first window is what
// manifestctl apply --wait's default --settle for a watched container must
// cover, so that a crashing container fails the wait. Run it once:
//
//	go test -run '^$' -bench BenchmarkCrashVisibleAfterRunning -benchtime=1x -timeout 20m .
func BenchmarkCrashVisibleAfterRunning(b *testing.B) {
	const rounds = 20
	h := newAgent(b)
	var toFlag, toRecord, watchedToFlag []time.Duration
	neverRunning := 0 // the first sight of the container already showed its exit
	for i := 0; i < rounds; i++ {
		crash := testPod(fmt.Sprintf("crash%d", i), shContainer("c", "echo boom; exit 1"))
		h.writeManifest(crash)
		var runningAt, flaggedAt, watchedAt time.Time
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("%s: no exit seen within 30s\n%s", crash.Name, h.log(20))
			}
			p, err := h.client.Pod(context.Background(), "default", h.podName(crash.Name))
			if err != nil {
				continue
			}
			c := findContainer(p.Pod, "c")
			if c == nil {
				continue
			}
			now := time.Now()
			running := c.State == localapi.StateRunning
			if running && c.Process != localapi.ProcessExited && runningAt.IsZero() && flaggedAt.IsZero() {
				runningAt = now
			}
			if running && c.Process == localapi.ProcessWatched && watchedAt.IsZero() && flaggedAt.IsZero() {
				watchedAt = now
			}
			recorded := (c.State == localapi.StateTerminated && c.ExitCode != nil && *c.ExitCode == 1) || (c.LastTermination != nil && c.LastTermination.ExitCode == 1)
			if flaggedAt.IsZero() && (recorded || c.Process == localapi.ProcessExited) {
				flaggedAt = now
			}
			if recorded {
				if runningAt.IsZero() {
					neverRunning++
				} else {
					toFlag = append(toFlag, flaggedAt.Sub(runningAt))
					if !watchedAt.IsZero() {
						watchedToFlag = append(watchedToFlag, flaggedAt.Sub(watchedAt))
					}
					toRecord = append(toRecord, now.Sub(runningAt))
				}
				break
			}
		}
		h.removeManifest(crash.Name)
	}
	if len(toFlag) == 0 {
		b.Logf("never shown running in %d rounds", rounds)
		return
	}
	slices.Sort(toFlag)
	slices.Sort(toRecord)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(toFlag[len(toFlag)/2]), "running-to-exited-p50-ms")
	b.ReportMetric(ms(toFlag[len(toFlag)-1]), "running-to-exited-max-ms")
	b.ReportMetric(ms(toRecord[len(toRecord)/2]), "running-to-exitcode-p50-ms")
	slices.Sort(watchedToFlag)
	b.Logf("%d rounds: shown running before the exit in %d, never in %d\n  running -> process exited: %v\n  process watched -> exited (%d): %v\n  running -> exit code: %v",
		rounds, len(toFlag), neverRunning, toFlag, len(watchedToFlag), watchedToFlag, toRecord)
}
