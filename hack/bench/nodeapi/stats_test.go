package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range v {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want summary
	}{
		{"one", ms(7), summary{median: 7 * time.Millisecond, p90: 7 * time.Millisecond, min: 7 * time.Millisecond}},
		{"odd count, unsorted", ms(5, 1, 3), summary{median: 3 * time.Millisecond, p90: 5 * time.Millisecond, min: time.Millisecond}},
		{"even count: the middle two's mean", ms(4, 1, 2, 3), summary{median: 2500 * time.Microsecond, p90: 4 * time.Millisecond, min: time.Millisecond}},
		// ceil(0.9*10) = 9: the ninth smallest, not the largest.
		{"p90 by nearest rank", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), summary{median: 5500 * time.Microsecond, p90: 9 * time.Millisecond, min: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			if got := summarize(tc.in); got != tc.want {
				t.Errorf("summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("summarize reordered its argument: %v, was %v", tc.in, in)
				}
			}
		})
	}
}
