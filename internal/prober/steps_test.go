package prober

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/internal/timeline"
)

// An update says when its probe was due, not when the timer fired: a
// late timer shows as time between the two.
func TestUpdateSaysWhenItsProbeWasDueAndRan(t *testing.T) {
	e := newEnv(t)
	p := execProbe(5, 1, 1)
	p.InitialDelaySeconds = 3
	pod := probedPod(corev1.Container{ReadinessProbe: p})
	start := e.clock.Now()
	e.m.Sync(pod, running(pod, "c1", start))
	e.tick(3500*time.Millisecond, 1, 1)
	u := e.update()
	if want := start.Add(3 * time.Second); !u.Due.Equal(want) {
		t.Errorf("Due = %v, want the end of the initial delay %v", u.Due, want)
	}
	if want := start.Add(3500 * time.Millisecond); !u.Ran.Equal(want) {
		t.Errorf("Ran = %v, want %v", u.Ran, want)
	}
}

// A container that started long before its worker (the agent restarted)
// is due when the worker begins, not when its initial delay ended.
func TestAnOverdueFirstProbeIsDueWhenItsWorkerBegins(t *testing.T) {
	e := newEnv(t)
	pod := probedPod(corev1.Container{ReadinessProbe: execProbe(1, 1, 1)})
	now := e.clock.Now()
	e.m.Sync(pod, running(pod, "c1", now.Add(-time.Hour)))
	e.probes(1)
	if u := e.update(); !u.Due.Equal(now) || !u.Ran.Equal(now) {
		t.Errorf("Due, Ran = %v, %v, want both %v", u.Due, u.Ran, now)
	}
}

func newTestSteps(t *testing.T, writes bool) (*Steps, *timeline.Log, metrics.KubeRegistry, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	log := timeline.NewWithClock(0, clk)
	reg := metrics.NewKubeRegistry()
	s, err := NewSteps(StepsOptions{Timeline: log, Registry: reg, Writes: writes, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return s, log, reg, clk
}

func messagesOf(log *timeline.Log) []string {
	var out []string
	for _, e := range log.Get("uid-1") {
		out = append(out, e.Kind+": "+e.Message)
	}
	return out
}

// stepObserved returns the count and sum of one step's histogram.
func stepObserved(t *testing.T, reg metrics.KubeRegistry, kind, step string) (int, float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "nodeagent_prober_result_step_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["probe_type"] == kind && labels["step"] == step {
				return int(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
			}
		}
	}
	return 0, 0
}

func TestStepsRecordEachStepOfAChange(t *testing.T) {
	s, log, reg, clk := newTestSteps(t, true)
	due := clk.Now()
	ran := due.Add(35 * time.Millisecond)
	u := Update{PodUID: "uid-1", Container: "app", Kind: Readiness, Result: Success, Due: due, Ran: ran}
	s.Shown(u, `Readiness probe of "app": success`, ran.Add(300*time.Microsecond), 7)
	clk.SetTime(ran.Add(6 * time.Millisecond))
	s.Written("uid-1", 6) // an older status: the change is not in it
	s.Written("uid-1", 7)
	s.Written("uid-1", 8) // told again: recorded once

	want := []string{
		`probe: Readiness probe of "app": success; due 03:04:05.000000, result after 35.000ms, in the status 0.300ms after it`,
		`probe: Readiness probe of "app": success: in the apiserver 6.000ms after the result`,
	}
	if got := messagesOf(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for step, want := range map[string]float64{stepRan: 0.035, stepStatus: 0.0003, stepAPIServer: 0.006} {
		n, sum := stepObserved(t, reg, "Readiness", step)
		if n != 1 || sum < want*0.999 || sum > want*1.001 {
			t.Errorf("step %s: %d observations summing to %g, want 1 of %g", step, n, sum, want)
		}
	}
}

func TestStepsStandaloneFollowNoWrites(t *testing.T) {
	s, log, reg, clk := newTestSteps(t, false)
	u := Update{PodUID: "uid-1", Container: "app", Kind: Readiness, Result: Failure, Due: clk.Now(), Ran: clk.Now()}
	s.Shown(u, "failed", clk.Now(), 3)
	s.Written("uid-1", 3)
	if got := messagesOf(log); len(got) != 1 {
		t.Errorf("timeline %v, want the change only", got)
	}
	if n, _ := stepObserved(t, reg, "Readiness", stepAPIServer); n != 0 {
		t.Errorf("apiserver step observed %d times in standalone mode", n)
	}
	if len(s.pending) != 0 {
		t.Errorf("pending %v in standalone mode", s.pending)
	}
}

func TestStepsOfAChangeNoStatusShows(t *testing.T) {
	s, log, reg, clk := newTestSteps(t, true)
	live := Update{PodUID: "uid-1", Container: "app", Kind: Liveness, Result: Failure, Due: clk.Now(), Ran: clk.Now()}
	s.Shown(live, "liveness failed", clk.Now(), 0) // the status did not change
	early := Update{PodUID: "uid-1", Container: "app", Kind: Startup, Result: Success, Due: clk.Now(), Ran: clk.Now()}
	s.Shown(early, "started", time.Time{}, 0) // no status yet
	s.Written("uid-1", 100)
	want := []string{
		"probe: liveness failed; due 03:04:05.000000, result after 0.000ms, status unchanged",
		"probe: started; due 03:04:05.000000, result after 0.000ms",
	}
	if got := messagesOf(log); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, k := range []string{"Liveness", "Startup"} {
		if n, _ := stepObserved(t, reg, k, stepStatus); n != 0 {
			t.Errorf("%s: status step observed %d times for no status change", k, n)
		}
	}
}

func TestStepsPendingAreBoundedAndForgotten(t *testing.T) {
	s, _, _, clk := newTestSteps(t, true)
	for gen := uint64(1); gen <= maxPendingWrites+5; gen++ {
		u := Update{PodUID: "uid-1", Kind: Readiness, Result: Success, Due: clk.Now(), Ran: clk.Now()}
		s.Shown(u, "x", clk.Now(), gen)
	}
	if ps := s.pending["uid-1"]; len(ps) != maxPendingWrites || ps[0].gen != 6 {
		t.Errorf("pending holds %d, oldest gen %d; want the newest %d", len(ps), ps[0].gen, maxPendingWrites)
	}
	s.Written("uid-1", 10)
	if ps := s.pending["uid-1"]; len(ps) != maxPendingWrites+5-10 || ps[0].gen != 11 {
		t.Errorf("after generation 10 written, pending holds %d from gen %d", len(ps), ps[0].gen)
	}
	s.Forget("uid-1")
	if len(s.pending) != 0 {
		t.Errorf("pending after Forget: %v", s.pending)
	}
}

func TestNilStepsAreInert(t *testing.T) {
	var s *Steps
	s.Shown(Update{PodUID: "a"}, "x", time.Now(), 1)
	s.Written("a", 1)
	s.Forget("a")
}
