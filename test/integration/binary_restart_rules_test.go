package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A regular container's own restartPolicy and restartPolicyRules
// (ContainerRestartRules) override the pod's restartPolicy, as under the
// kubelet: a rule whose exit codes match restarts the container; a
// container's Never keeps a failed container of an Always pod dead, and
// the pod fails; its Always restarts it in a Never pod; its OnFailure
// restarts a failure and ends with a success (a Job's container retried
// in place, the pod never Failed).
func TestBinaryContainerRestartRules(t *testing.T) {
	h := newAgent(t)
	rule42 := []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	// Fails the first time, succeeds the next: the mark is in an emptyDir,
	// which outlives the container.
	failOnce := "if [ -f /scratch/ran ]; then exit 0; fi; touch /scratch/ran; exit 1"
	for _, tc := range []struct {
		name      string
		pod       corev1.RestartPolicy
		container corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		script    string
	}{
		{"rule-match", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, rule42, "sleep 1; exit 42"},
		{"rule-mismatch", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyNever, rule42, "sleep 1; exit 1"},
		{"container-never", corev1.RestartPolicyAlways, corev1.ContainerRestartPolicyNever, nil, "sleep 1; exit 1"},
		{"container-always", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyAlways, nil, "sleep 1; exit 1"},
		{"container-onfailure", corev1.RestartPolicyNever, corev1.ContainerRestartPolicyOnFailure, nil, failOnce},
	} {
		c := shContainer("main", tc.script)
		c.RestartPolicy = ptr.To(tc.container)
		c.RestartPolicyRules = tc.rules
		c.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		pod := testPod(tc.name, c)
		pod.Spec.RestartPolicy = tc.pod
		pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		h.writeManifest(pod)
	}
	restarted := func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && c.RestartCount >= 1 && p.Phase == "Running"
	}
	h.waitPod("rule-match", "restarted by its rule", 60*time.Second, restarted)
	h.waitPod("container-always", "restarted by its own Always", 60*time.Second, restarted)
	ok := h.waitPod("container-onfailure", "restarted once, then succeeded", 60*time.Second, func(p localapi.Pod) bool { return p.Phase == "Succeeded" })
	if c := findContainer(ok, "main"); c == nil || c.RestartCount != 1 || c.ExitCode == nil || *c.ExitCode != 0 {
		t.Errorf("container-onfailure: container %+v, want one restart and exit code 0", c)
	}
	for _, name := range []string{"rule-mismatch", "container-never"} {
		p := h.waitPod(name, "failed", 60*time.Second, func(p localapi.Pod) bool { return p.Phase == "Failed" })
		if c := findContainer(p, "main"); c == nil || c.State != localapi.StateTerminated || c.RestartCount != 0 {
			t.Errorf("pod %s: container %+v, want terminated and never restarted", name, c)
		}
	}
	time.Sleep(3 * time.Second) // several relists
	for _, name := range []string{"rule-mismatch", "container-never", "container-onfailure"} {
		if running := h.containers(name, true); len(running) > 0 {
			t.Errorf("pod %s: %d containers running after it ended", name, len(running))
		}
	}
}
