package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The runtime's own share of a pod's start: the CRI calls the agent made
// for a pod, replayed against the same containerd with nothing of the
// agent around them. BenchmarkBinaryPodSpec compares the agent's start of
// a pod with every field set against a plain one; the same comparison of
// the replays says how much of the difference is the runtime's (more
// mounts, a seccomp profile, sysctls, a shared PID namespace) and how much
// the agent's.

// replayedCalls are the sandbox and "main" container configs the agent
// gave the runtime for one pod, as the runtime recorded them.
type replayedCalls struct {
	sandbox   *runtimeapi.PodSandboxConfig
	container *runtimeapi.ContainerConfig
}

// recordedCalls reads back, from the runtime's verbose statuses, the
// configs the agent sent for the pod named name: its sandbox's and its
// container main's.
func recordedCalls(b *testing.B, h *agentHarness, name string) replayedCalls {
	ctx := context.Background()
	sbs := h.sandboxes(name)
	if len(sbs) != 1 {
		b.Fatalf("%s: %d sandboxes, want 1", name, len(sbs))
	}
	sbStatus, err := h.cri.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbs[0].Id, Verbose: true})
	if err != nil {
		b.Fatal(err)
	}
	var sb struct {
		Config *runtimeapi.PodSandboxConfig `json:"config"`
	}
	if err := json.Unmarshal([]byte(sbStatus.Info["info"]), &sb); err != nil || sb.Config == nil {
		b.Fatalf("%s: the sandbox's verbose info has no config (%v): %.300s", name, err, sbStatus.Info["info"])
	}
	var ctr struct {
		Config *runtimeapi.ContainerConfig `json:"config"`
	}
	for _, c := range h.containers(name, true) {
		if c.GetMetadata().GetName() != "main" {
			continue
		}
		st, err := h.cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id, Verbose: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal([]byte(st.Info["info"]), &ctr); err != nil || ctr.Config == nil {
			b.Fatalf("%s: the container's verbose info has no config (%v): %.300s", name, err, st.Info["info"])
		}
	}
	if ctr.Config == nil {
		b.Fatalf("%s: no running container main", name)
	}
	return replayedCalls{sandbox: sb.Config, container: ctr.Config}
}

// replay makes the recorded calls again as a pod of its own, unknown to
// every agent (no pod identity labels, so no agent takes it for an
// orphan), and returns how long the runtime took from RunPodSandbox to
// the container seen running, polled as the agent's starts are. The pod
// is removed before it returns.
func (r replayedCalls) replay(b *testing.B, h *agentHarness, id string) time.Duration {
	ctx := context.Background()
	logDir := b.TempDir()
	sandbox := cloneSandboxConfig(b, r.sandbox)
	sandbox.Metadata = &runtimeapi.PodSandboxMetadata{Name: "replay-" + id, Namespace: "replay", Uid: "replay-" + id}
	sandbox.Labels = map[string]string{"nodeagent.test/replay": id}
	sandbox.LogDirectory = logDir
	container := cloneContainerConfig(b, r.container)
	container.Labels = map[string]string{"nodeagent.test/replay": id}
	if err := os.MkdirAll(logDir+"/main", 0o755); err != nil {
		b.Fatal(err)
	}

	t0 := time.Now()
	sb, err := h.cri.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandbox})
	if err != nil {
		b.Fatalf("replay %s: RunPodSandbox: %v", id, err)
	}
	defer func() {
		_, _ = h.cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId})
		if _, err := h.cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
			b.Errorf("replay %s: RemovePodSandbox: %v", id, err)
		}
	}()
	cc, err := h.cri.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: container, SandboxConfig: sandbox})
	if err != nil {
		b.Fatalf("replay %s: CreateContainer: %v", id, err)
	}
	if _, err := h.cri.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		b.Fatalf("replay %s: StartContainer: %v", id, err)
	}
	for {
		st, err := h.cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cc.ContainerId})
		if err != nil {
			b.Fatal(err)
		}
		if st.Status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return time.Since(t0)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func cloneSandboxConfig(b *testing.B, c *runtimeapi.PodSandboxConfig) *runtimeapi.PodSandboxConfig {
	out := &runtimeapi.PodSandboxConfig{}
	cloneJSON(b, c, out)
	return out
}

func cloneContainerConfig(b *testing.B, c *runtimeapi.ContainerConfig) *runtimeapi.ContainerConfig {
	out := &runtimeapi.ContainerConfig{}
	cloneJSON(b, c, out)
	return out
}

func cloneJSON(b *testing.B, in, out any) {
	data, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		b.Fatal(fmt.Errorf("copying a CRI config: %w", err))
	}
}

// BenchmarkBinaryPodSpecFloorByField says where the runtime's time goes
// for the every-field pod of BenchmarkBinaryPodSpec: its recorded calls
// replayed whole, and with one group of fields taken out at a time
// (seccomp, the mounts, the shared PID namespace, the sysctls, ...),
// medians of 12, interleaved. The agent's own part is measured by
// BenchmarkBinaryPodSpec (agent-added-ms); this one is the runtime's.
//
//	go test -run '^$' -bench BenchmarkBinaryPodSpecFloorByField -benchtime=1x ./...
func BenchmarkBinaryPodSpecFloorByField(b *testing.B) {
	h := newAgent(b)
	port = 22000
	h.writeManifest(everyFieldPod(h, "recorded", false))
	if err := pollContainerRunning(h, h.podName("recorded"), "main", time.Minute); err != nil {
		b.Fatal(err)
	}
	recorded := recordedCalls(b, h, "recorded")
	without := []struct {
		name string
		edit func(replayedCalls)
	}{
		{"all", func(replayedCalls) {}},
		{"no-seccomp", func(r replayedCalls) {
			r.container.Linux.SecurityContext.Seccomp = nil
			r.sandbox.Linux.SecurityContext.Seccomp = nil
		}},
		{"no-mounts", func(r replayedCalls) { r.container.Mounts = nil }},
		{"own-pid-namespace", func(r replayedCalls) {
			r.sandbox.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_CONTAINER
			r.container.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_CONTAINER
		}},
		{"no-sysctls", func(r replayedCalls) { r.sandbox.Linux.Sysctls = nil }},
		{"no-resources", func(r replayedCalls) { r.container.Linux.Resources = nil; r.sandbox.Linux.Resources = nil }},
		{"no-user", func(r replayedCalls) {
			sc := r.container.Linux.SecurityContext
			sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = nil, nil, nil
		}},
		{"no-capabilities", func(r replayedCalls) {
			sc := r.container.Linux.SecurityContext
			sc.Capabilities, sc.NoNewPrivs = nil, false
		}},
		{"no-env", func(r replayedCalls) { r.container.Envs = nil }},
	}
	took := map[string][]time.Duration{}
	for i := range 12 {
		for _, w := range without {
			r := replayedCalls{sandbox: cloneSandboxConfig(b, recorded.sandbox), container: cloneContainerConfig(b, recorded.container)}
			w.edit(r)
			took[w.name] = append(took[w.name], r.replay(b, h, fmt.Sprintf("%s-%d", w.name, i)))
		}
	}
	for _, w := range without {
		b.ReportMetric(float64(median(took[w.name]).Microseconds())/1000, w.name+"-p50-ms")
	}
}
