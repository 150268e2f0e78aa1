package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// The agent notices a container's exit from its process, not from its
// relist: with the relist an hour apart, a pod whose container exits is
// reported Failed with the exit code all the same, both for a container it
// started and for one it adopted after a restart.
func TestBinaryExitsAreSeenWithoutARelist(t *testing.T) {
	h := newAgent(t, "--relist-interval=1h")
	started := testPod("exits", shContainer("main", "sleep 0.3; exit 3"))
	started.Spec.RestartPolicy = corev1.RestartPolicyNever
	adopted := testPod("adopted", shContainer("main", "while [ ! -f /tmp/stop ]; do sleep 0.05; done; exit 5"))
	adopted.Spec.RestartPolicy = corev1.RestartPolicyNever
	h.writeManifest(started)
	h.writeManifest(adopted)

	failedWith := func(name string, code int32) {
		t.Helper()
		p := h.waitPod(name, "Failed", 30*time.Second, func(p localapi.Pod) bool { return p.Phase == string(corev1.PodFailed) })
		if c := findContainer(p, "main"); c == nil || c.ExitCode == nil || *c.ExitCode != code {
			t.Errorf("pod %s: container %+v, want exit code %d", name, c, code)
		}
	}
	failedWith("exits", 3)

	h.waitPod("adopted", "running", 30*time.Second, runningContainer("main"))
	h.stop()
	h.start()
	h.waitPod("adopted", "running after the restart", 30*time.Second, runningContainer("main"))
	id := h.runningIDs("adopted")["main"]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := h.cri.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"touch", "/tmp/stop"}, Timeout: 10})
	if err != nil || resp.ExitCode != 0 {
		t.Fatalf("exec touch /tmp/stop in %s: %v (exit %d)", id, err, resp.GetExitCode())
	}
	failedWith("adopted", 5)
}
