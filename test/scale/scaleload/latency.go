package main

import (
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// startups records, for each pod the watch sees, when it was first seen,
// first seen bound to a node, and first seen Running. Its methods are safe
// for concurrent use.
type startups struct {
	mu        sync.Mutex
	now       func() time.Time
	seen      map[string]time.Time
	scheduled map[string]time.Time
	running   map[string]time.Time
	gone      map[string]bool
}

func newStartups(now func() time.Time) *startups {
	return &startups{
		now: now, seen: map[string]time.Time{}, scheduled: map[string]time.Time{},
		running: map[string]time.Time{}, gone: map[string]bool{},
	}
}

// observe takes a pod as the watch delivers it (added or updated).
func (s *startups) observe(pod *corev1.Pod) {
	t := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[pod.Name]; !ok {
		s.seen[pod.Name] = t
	}
	if _, ok := s.scheduled[pod.Name]; !ok && pod.Spec.NodeName != "" {
		s.scheduled[pod.Name] = t
	}
	if _, ok := s.running[pod.Name]; !ok && pod.Status.Phase == corev1.PodRunning {
		s.running[pod.Name] = t
	}
}

// forget records that the pod is gone.
func (s *startups) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[name] = true
}

// counts is how many pods were seen, seen Running, and exist now.
func (s *startups) counts() (seen, running, present int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen), len(s.running), len(s.seen) - len(s.gone)
}

// stage is a part of a pod's start-up.
type stage int

const (
	startUp    stage = iota // seen, to seen Running
	scheduling              // seen, to seen bound to a node
	onTheNode               // seen bound, to seen Running
)

// latencies are the times the pods seen Running took for the stage, sorted.
func (s *startups) latencies(st stage) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, 0, len(s.running))
	for name, running := range s.running {
		from, to := s.seen[name], running
		switch st {
		case scheduling:
			to = s.scheduled[name]
		case onTheNode:
			from = s.scheduled[name]
		}
		out = append(out, to.Sub(from))
	}
	slices.Sort(out)
	return out
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// durations; zero for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}
