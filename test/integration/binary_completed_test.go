package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// containerWatch records every container the runtime ever lists for some
// pods, polling the CRI directly: a container created and removed between
// two reads of the local API still shows here.
type containerWatch struct {
	mu   sync.Mutex
	seen map[string]map[string]bool // pod name -> container IDs
	stop func()
	done chan struct{}
}

func watchContainers(t *testing.T, h *agentHarness, names ...string) *containerWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &containerWatch{seen: map[string]map[string]bool{}, stop: cancel, done: make(chan struct{})}
	for _, n := range names {
		w.seen[n] = map[string]bool{}
	}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			for _, n := range names {
				req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
					LabelSelector: map[string]string{"io.kubernetes.pod.name": h.podName(n)},
				}}
				resp, err := h.cri.Runtime.ListContainers(ctx, req)
				if err != nil {
					continue // containerd restarting
				}
				w.mu.Lock()
				for _, c := range resp.Containers {
					w.seen[n][c.Id] = true
				}
				w.mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-w.done
	})
	return w
}

func (w *containerWatch) ids(name string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for id := range w.seen[name] {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// A pod that completed (restartPolicy Never, or OnFailure with exit 0) is
// never run again under its UID: not after the agent restarts by SIGTERM
// or SIGKILL, not after containerd restarts, not after its containers are
// removed behind the agent's back. Its terminal phase and final container
// statuses stay reported.
func TestBinaryCompletedPodsStayCompleted(t *testing.T) {
	h := newAgent(t)
	never := testPod("never", shContainer("main", "sleep 0.5; exit 3"))
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	onFailure := testPod("onfailure", shContainer("main", "sleep 0.5; exit 0"))
	onFailure.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	h.writeManifest(never)
	h.writeManifest(onFailure)
	watch := watchContainers(t, h, "never", "onfailure")

	want := map[string]struct {
		phase string
		code  int32
	}{"never": {"Failed", 3}, "onfailure": {"Succeeded", 0}}
	uids := map[string]string{}
	for name, w := range want {
		p := h.waitPod(name, w.phase, 60*time.Second, func(p localapi.Pod) bool { return p.Phase == w.phase })
		uids[name] = p.UID
	}
	first := map[string][]string{}
	for name := range want {
		first[name] = watch.ids(name)
		if len(first[name]) != 1 {
			t.Fatalf("pod %s: the runtime listed containers %v, want exactly one", name, first[name])
		}
	}

	// check: after a few relists and housekeeping periods, each pod is
	// still reported completed, with its exit code, and no container was
	// created for it since the first.
	check := func(after string) {
		t.Helper()
		time.Sleep(3 * time.Second)
		for name, w := range want {
			p := h.waitPod(name, "reported "+w.phase, 30*time.Second, func(p localapi.Pod) bool { return p.Phase == w.phase })
			c := findContainer(p, "main")
			if p.UID != uids[name] || c == nil || c.State != localapi.StateTerminated || c.ExitCode == nil || *c.ExitCode != w.code || c.RestartCount != 0 {
				t.Errorf("after %s: pod %s (uid %s) container %+v, want uid %s terminated with %d and no restart", after, name, p.UID, c, uids[name], w.code)
			}
			if got := watch.ids(name); !slices.Equal(got, first[name]) {
				t.Fatalf("after %s: pod %s: the runtime listed containers %v, want only the first %v", after, name, got, first[name])
			}
		}
		if rc := h.runningIDs("never"); len(rc) > 0 {
			t.Errorf("after %s: running containers %v", after, rc)
		}
	}
	check("completion")
	for i := range 3 {
		h.stop()
		h.start()
		check(fmt.Sprintf("SIGTERM and restart %d", i+1))
	}
	for i := range 3 {
		h.kill9()
		h.start()
		check(fmt.Sprintf("SIGKILL and restart %d", i+1))
	}
	restartContainerd(t)
	check("a containerd restart")

	// Whatever the runtime still holds of them goes, behind the agent's back.
	ctx := context.Background()
	h.stop()
	for name := range want {
		for _, c := range h.containers(name, false) {
			if _, err := h.cri.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id}); err != nil {
				t.Fatal(err)
			}
		}
		for _, sb := range h.sandboxes(name) {
			if _, err := h.cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.start()
	check("its containers were removed through the CRI")

	// A changed manifest is a new pod: it runs.
	onFailure.Spec.Containers[0].Command[2] += " # changed"
	h.writeManifest(onFailure)
	h.waitPod("onfailure", "the changed pod succeeds", 60*time.Second, func(p localapi.Pod) bool {
		return p.UID != uids["onfailure"] && p.Phase == "Succeeded"
	})
}
