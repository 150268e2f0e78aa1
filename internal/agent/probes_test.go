package agent

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/prober"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func execProbe(failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: failures,
	}
}

func podCondition(e *testEnv, pod *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	info, _ := e.agent.Pod(pod.UID)
	for _, c := range info.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// Readiness follows the probe both ways, in the container's Ready and the
// pod's Ready and ContainersReady conditions; the container keeps running.
func TestReadinessProbeDrivesReadyBothWays(t *testing.T) {
	e := newTestEnv(t)
	e.rt.setExecFails("main", true)
	e.start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Spec.Containers[0].ReadinessProbe = execProbe(1)
	e.send(podtypes.ADD, pod)

	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	time.Sleep(50 * time.Millisecond)
	if podCondition(e, pod, corev1.PodReady) != corev1.ConditionFalse {
		t.Fatal("ready while its readiness probe fails")
	}
	e.rt.setExecFails("main", false)
	e.eventually("the pod is ready", func() bool {
		return podCondition(e, pod, corev1.PodReady) == corev1.ConditionTrue &&
			podCondition(e, pod, corev1.ContainersReady) == corev1.ConditionTrue
	})
	// The timeline has the change with its steps (prober.Steps).
	stepped := regexp.MustCompile(`^Readiness probe of "main": success; due [0-9:.]+, result after [0-9.]+ms, in the status [0-9.]+ms after it$`)
	e.eventually("the timeline has the change's steps", func() bool {
		for _, en := range e.agent.Timeline(pod.UID) {
			if en.Kind == "probe" && stepped.MatchString(en.Message) {
				return true
			}
		}
		return false
	})
	e.rt.setExecFails("main", true)
	e.eventually("the pod is unready again", func() bool {
		info, _ := e.agent.Pod(pod.UID)
		return podCondition(e, pod, corev1.PodReady) == corev1.ConditionFalse && !info.Status.ContainerStatuses[0].Ready
	})
	if s := e.rt.containerStops(); len(s) != 0 {
		t.Fatalf("a readiness failure stopped containers: %v", s)
	}
}

// A failed liveness probe kills the container with the probe's grace
// period; it restarts under restartPolicy Always, and its last
// termination says why it was killed.
func TestLivenessProbeFailureRestartsTheContainer(t *testing.T) {
	e := newTestEnv(t).start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	p := execProbe(2)
	p.TerminationGracePeriodSeconds = new(int64(3))
	pod.Spec.Containers[0].LivenessProbe = p
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	first := e.rt.runningIDs(pod.UID)

	e.rt.setExecFails("main", true)
	e.eventually("the container is restarted", func() bool {
		info, _ := e.agent.Pod(pod.UID)
		cs := info.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].State.Running != nil
	})
	e.rt.setExecFails("main", false)
	stops := e.rt.containerStops()
	if len(stops) == 0 || stops[0].Grace != 3 {
		t.Fatalf("stops = %+v, want the container stopped with the probe's grace 3", stops)
	}
	info, _ := e.agent.Pod(pod.UID)
	last := info.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ContainerID != "containerd://"+first[0] || !strings.Contains(last.Message, "Liveness probe failed") {
		t.Fatalf("last termination = %+v, want the first container killed for its liveness probe", last)
	}
	var killed bool
	for _, en := range e.agent.Timeline(pod.UID) {
		killed = killed || strings.Contains(en.Message, "KillContainer") && strings.Contains(en.Message, "Liveness probe failed")
	}
	if !killed {
		t.Fatalf("the timeline does not say the container was killed for its liveness probe: %+v", e.agent.Timeline(pod.UID))
	}
}

// A postStart hook that fails kills its container, which restarts; its
// last termination says why.
func TestFailedPostStartHookKillsTheContainer(t *testing.T) {
	e := newTestEnv(t)
	e.rt.setExecFails("main", true)
	e.start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{
		PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"setup"}}},
	}
	e.send(podtypes.ADD, pod)
	e.eventually("the container is killed and restarted", func() bool {
		info, _ := e.agent.Pod(pod.UID)
		cs := info.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].LastTerminationState.Terminated != nil
	})
	e.rt.setExecFails("main", false)
	info, _ := e.agent.Pod(pod.UID)
	if msg := info.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message; !strings.Contains(msg, prober.ReasonFailedPostStartHook) {
		t.Fatalf("last termination message = %q, want %s", msg, prober.ReasonFailedPostStartHook)
	}
	if s := e.rt.containerStops(); len(s) == 0 || s[0].Grace != 7 {
		t.Fatalf("stops = %+v, want the container stopped with the pod's grace 7", s)
	}
}

// A preStop hook runs before the stop, and what it took comes off the
// grace period the stop gets: the kill still comes within the pod's.
func TestPreStopHookTakesFromTheGracePeriod(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	e.start()
	pod := staticPod("web", "busybox", corev1.RestartPolicyAlways)
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{
		PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}},
	}
	e.send(podtypes.ADD, pod)
	e.eventually("the pod runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
	began := time.Now()
	e.send(podtypes.REMOVE, pod)
	e.eventually("the pod is stopped", func() bool { return len(e.rt.stopCalls()) > 0 })
	if took := time.Since(began); took < time.Second {
		t.Fatalf("stopped %v after the removal, before its 1 s preStop hook ended", took)
	}
	stop := e.rt.stopCalls()[0]
	if stop.Grace == nil || *stop.Grace != 5 {
		t.Fatalf("StopPod grace = %v, want 5 (7 less the hook's 1 s, rounded down)", stop.Grace)
	}
	var ran bool
	for _, en := range e.agent.Timeline(pod.UID) {
		ran = ran || strings.Contains(en.Message, `PreStop hook of "main" ran`)
	}
	if !ran {
		t.Fatalf("the timeline does not show the preStop hook: %+v", e.agent.Timeline(pod.UID))
	}
}
