package objectcache

import (
	"math/rand/v2"
	"time"
)

// backoff is a jittered exponential backoff: each delay doubles, up to max,
// and gets up to half of itself added at random, so that the nodes of a
// cluster that lost the apiserver together do not come back in step.
type backoff struct {
	initial, max time.Duration
	cur          time.Duration // zero: the next delay is initial
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max}
}

// next returns the delay before the next retry and lengthens the one after.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.initial
	}
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	return d + rand.N(d/2+1) // #nosec G404 -- jitter spreads retries; it guards no secret
}

// reset makes the next delay initial again, after a success.
func (b *backoff) reset() { b.cur = 0 }
