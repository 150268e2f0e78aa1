package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// restartPolicy Always restarts an exiting container, with a growing
// back-off; Never leaves it exited; OnFailure restarts only a failure.
func TestBinaryRestartPolicies(t *testing.T) {
	h := newAgent(t)
	for _, tc := range []struct {
		name   string
		policy corev1.RestartPolicy
		script string
	}{
		{"always", corev1.RestartPolicyAlways, "sleep 1; exit 1"},
		{"never", corev1.RestartPolicyNever, "sleep 1; exit 1"},
		{"onfailure-ok", corev1.RestartPolicyOnFailure, "sleep 1; exit 0"},
	} {
		pod := testPod(tc.name, shContainer("main", tc.script))
		pod.Spec.RestartPolicy = tc.policy
		h.writeManifest(pod)
	}

	// Always: restarted, then held in CrashLoopBackOff.
	h.waitPod("always", "restarted and backing off", 60*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && c.RestartCount >= 1 && c.State == localapi.StateWaiting && c.Reason == "CrashLoopBackOff"
	})

	// Never and OnFailure-with-success: exited once, and stay so.
	never := h.waitPod("never", "failed", 30*time.Second, func(p localapi.Pod) bool { return p.Phase == "Failed" })
	ok := h.waitPod("onfailure-ok", "succeeded", 30*time.Second, func(p localapi.Pod) bool { return p.Phase == "Succeeded" })
	for _, p := range []localapi.Pod{never, ok} {
		if c := findContainer(p, "main"); c == nil || c.State != localapi.StateTerminated || c.RestartCount != 0 {
			t.Errorf("pod %s: container %+v, want terminated and never restarted", p.Name, c)
		}
	}
	time.Sleep(3 * time.Second) // several relists
	for _, name := range []string{"never", "onfailure-ok"} {
		// The agent may have cleaned the finished pod up; it must not have
		// started the container again.
		if all, running := h.containers(name, false), h.containers(name, true); len(all) > 1 || len(running) > 0 {
			t.Errorf("pod %s: the runtime holds %d containers, %d running; want at most the one that exited", name, len(all), len(running))
		}
	}
}

// A container killed behind the agent's back is restarted per its policy.
func TestBinaryKilledContainerIsRestarted(t *testing.T) {
	h := newAgent(t)
	h.writeManifest(testPod("victim", shContainer("main", sleepForever)))
	h.waitPod("victim", "running", 60*time.Second, runningContainer("main"))
	before := h.runningIDs("victim")["main"]

	if _, err := h.cri.Runtime.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: before, Timeout: 0}); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	p := h.waitPod("victim", "running again", 60*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return runningContainer("main")(p) && c.RestartCount >= 1
	})
	t.Logf("stopped -> running again: %v", time.Since(stopped))
	after := h.runningIDs("victim")["main"]
	if after == "" || after == before {
		t.Errorf("running container after the kill: %q, want a new one (the killed one was %s)", after, before)
	}
	if c := findContainer(p, "main"); c.LastTermination == nil {
		t.Errorf("the restarted container reports no last termination: %+v", c)
	}
}
