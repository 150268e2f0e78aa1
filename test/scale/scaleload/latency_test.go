package main

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	cases := []struct {
		p    float64
		want time.Duration
	}{
		{50, 100 * time.Millisecond},
		{99, 198 * time.Millisecond},
		{100, 200 * time.Millisecond},
		{0.1, 1 * time.Millisecond},
	}
	for _, c := range cases {
		if got := percentile(ds, c.p); got != c.want {
			t.Errorf("percentile(1..200 ms, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(none) = %v, want 0", got)
	}
	if got := percentile(ds[:1], 99); got != time.Millisecond {
		t.Errorf("percentile of one = %v, want it", got)
	}
}

func TestStartupsTimeFromFirstSightToRunning(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newStartups(func() time.Time { return now })
	pod := func(name, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	s.observe(pod("a", "", corev1.PodPending))
	now = now.Add(100 * time.Millisecond)
	s.observe(pod("a", "n", corev1.PodPending)) // a bound 100 ms after seen
	now = now.Add(200 * time.Millisecond)
	s.observe(pod("b", "n", corev1.PodPending)) // b seen bound
	now = now.Add(200 * time.Millisecond)
	s.observe(pod("a", "n", corev1.PodRunning)) // 500 ms after a was seen
	now = now.Add(time.Second)
	s.observe(pod("a", "n", corev1.PodRunning)) // a later update changes nothing
	s.observe(pod("b", "n", corev1.PodRunning)) // 1.2 s after b was seen

	for _, c := range []struct {
		stage stage
		want  []time.Duration
	}{
		{startUp, []time.Duration{500 * time.Millisecond, 1200 * time.Millisecond}},
		{scheduling, []time.Duration{0, 100 * time.Millisecond}},
		{onTheNode, []time.Duration{400 * time.Millisecond, 1200 * time.Millisecond}},
	} {
		if got := s.latencies(c.stage); !slices.Equal(got, c.want) {
			t.Errorf("latencies(%d) = %v, want %v", c.stage, got, c.want)
		}
	}
	s.forget("a")
	if seen, running, present := s.counts(); seen != 2 || running != 2 || present != 1 {
		t.Errorf("counts = %d seen, %d running, %d present; want 2, 2, 1", seen, running, present)
	}
}
