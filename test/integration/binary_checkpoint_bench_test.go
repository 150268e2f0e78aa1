package integration

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkBinaryCheckpointBurst measures what the checkpoint costs a burst:
// 50 manifests at once -> all RUNNING, with the checkpoint and without it
// (--checkpoint-file none), alternating rounds, and reports the medians and
// their ratio. The checkpoint's writes are batched off the sync loop, so
// the ratio should stay within the round-to-round noise (10-20% here):
//
//	go test -run '^$' -bench BenchmarkBinaryCheckpointBurst -benchtime=1x -timeout 30m ./...
func BenchmarkBinaryCheckpointBurst(b *testing.B) {
	const n, rounds = 50, 3
	var with, without []time.Duration
	for r := range rounds {
		b.Run(fmt.Sprintf("with-%d", r), func(b *testing.B) { with = append(with, benchBurst(b, n)) })
		b.Run(fmt.Sprintf("without-%d", r), func(b *testing.B) {
			without = append(without, benchBurst(b, n, "--checkpoint-file", "none"))
		})
	}
	b.Run("median", func(b *testing.B) {
		if len(with) < rounds || len(without) < rounds {
			b.Fatalf("%d and %d rounds finished, want %d each", len(with), len(without), rounds)
		}
		w, wo := median(with), median(without)
		b.ReportMetric(float64(w.Milliseconds()), "with-checkpoint-ms")
		b.ReportMetric(float64(wo.Milliseconds()), "without-checkpoint-ms")
		b.ReportMetric(float64(w)/float64(wo), "with/without")
	})
}
