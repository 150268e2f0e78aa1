package main

import (
	"slices"
	"time"
)

type summary struct {
	median, p90, min time.Duration
}

// summarize gives the median (the mean of the middle two of an even count),
// the 90th percentile by nearest rank, and the minimum of ds (not empty).
func summarize(ds []time.Duration) summary {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	rank := (9*n + 9) / 10 // ceil(0.9 n)
	return summary{median: median, p90: s[rank-1], min: s[0]}
}
