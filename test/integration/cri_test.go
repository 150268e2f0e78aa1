package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// TestCRISmoke runs a busybox container in a host-network and in a bridge
// network sandbox, reads its log from the log path, and removes everything.
func TestCRISmoke(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hostNetwork bool
	}{{"host-network", true}, {"bridge-network", false}} {
		t.Run(tc.name, func(t *testing.T) {
			runSmoke(t, env.CRI(t), tc.name, tc.hostNetwork)
		})
	}
}

func runSmoke(t *testing.T, cri *framework.CRI, name string, hostNetwork bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	uid := "smoke-" + name
	logDir := filepath.Join(env.LogRoot, "default_"+name+"_"+uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(logDir) })

	config := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		LogDirectory: logDir,
		Labels:       map[string]string{"nodeagent.test/smoke": name},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    "/nodeagent/pod" + uid,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: &runtimeapi.NamespaceOption{}},
		},
	}
	if hostNetwork {
		config.Linux.SecurityContext.NamespaceOptions.Network = runtimeapi.NamespaceMode_NODE
	} else {
		config.Hostname = name
	}
	sb, err := cri.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	sandboxID := sb.PodSandboxId
	removed := false
	t.Cleanup(func() {
		if !removed { // a failed test must not leave the sandbox behind
			cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
			defer ccancel()
			cri.Runtime.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandboxID})
			cri.Runtime.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandboxID})
		}
	})

	status, err := cri.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	ip := status.GetStatus().GetNetwork().GetIp()
	if !hostNetwork && !strings.HasPrefix(ip, "10.") {
		t.Errorf("bridge sandbox IP = %q, want one from the private CNI range", ip)
	}

	cc, err := cri.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sandboxID,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
			Image:    &runtimeapi.ImageSpec{Image: env.BusyboxImage},
			Command:  []string{"sh", "-c", "echo hello from $(hostname); sleep 300"},
			LogPath:  "main/0.log",
			Linux:    &runtimeapi.LinuxContainerConfig{},
		},
		SandboxConfig: config,
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := cri.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}

	logPath := filepath.Join(logDir, "main", "0.log")
	var logText string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(logText, "hello from") {
		b, _ := os.ReadFile(logPath)
		logText = string(b)
		time.Sleep(50 * time.Millisecond)
	}
	// CRI log lines are "<time> stdout F <text>".
	if !strings.Contains(logText, " stdout F hello from") {
		t.Fatalf("log %s = %q, want a CRI-format stdout line from the container", logPath, logText)
	}

	if _, err := cri.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: cc.ContainerId, Timeout: 2}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	cs, err := cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cc.ContainerId})
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	if st := cs.GetStatus().GetState(); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container state after stop = %v, want EXITED", st)
	}
	if _, err := cri.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	if _, err := cri.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandboxID}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	if _, err := cri.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandboxID}); err != nil {
		t.Fatalf("RemovePodSandbox: %v", err)
	}
	removed = true

	left, err := cri.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"nodeagent.test/smoke": name}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(left.Items); n != 0 {
		t.Errorf("%d sandboxes left after removal", n)
	}
}
