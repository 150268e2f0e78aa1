package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// floorPod is the pod benchOneAtATime writes, as the agent would name it
// on node, with a UID of its own.
func floorPod(name, node string, hostNetwork bool) *corev1.Pod {
	pod := testPod(name+"-"+node, shContainer("main", benchForever))
	pod.Spec.HostNetwork = hostNetwork
	pod.UID = types.UID(fmt.Sprintf("floor-%s-%s", node, name))
	return pod
}

// floorNode names a node for one floor run, so that its pods are told apart.
func floorNode() string {
	suffix := make([]byte, 3)
	rand.Read(suffix)
	return "floor" + hex.EncodeToString(suffix)
}

// benchFloorOneAtATime is benchOneAtATime's start and removal measurements
// with the CRI calls made directly.
func benchFloorOneAtATime(b *testing.B, hostNetwork bool, n int) {
	ctx := context.Background()
	cri, rt, node := env.CRI(b), newRuntime(b), floorNode()
	var start, remove []time.Duration
	var first []string // the first ten pods' container IDs, to stop
	for i := 0; i < n; i++ {
		pod := floorPod(fmt.Sprintf("one-%d", i), node, hostNetwork)
		killAtEnd(b, rt, pod)
		sandbox, container := floorConfigs(b, rt, pod)
		t0 := time.Now()
		done := make(chan error, 1)
		go func() { done <- floorCalls(ctx, cri.Runtime, sandbox, container) }()
		id, _, err := pollRunning(cri, pod.Name, "", time.Minute)
		if err != nil {
			b.Fatalf("pod %s: %v (calls: %v)", pod.Name, err, <-done)
		}
		start = append(start, time.Since(t0))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		if i < 10 {
			first = append(first, id)
		}
	}
	// Removal's floor: StopContainer with the pod's grace period, seen
	// stopped by the same polling.
	for _, id := range first {
		t0 := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := cri.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 5})
			done <- err
		}()
		for {
			st, err := cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
			if err != nil {
				b.Fatal(err)
			}
			if st.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		remove = append(remove, time.Since(t0))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	reportNamed(b, "start", start)
	reportNamed(b, "remove", remove)
}

// benchFloorBurst is benchBurst with the three CRI calls of every pod made
// directly, all pods at once.
func benchFloorBurst(b *testing.B, n int) time.Duration {
	ctx := context.Background()
	cri, rt, node := env.CRI(b), newRuntime(b), floorNode()
	type call struct {
		sandbox   *runtimeapi.PodSandboxConfig
		container *runtimeapi.ContainerConfig
	}
	calls := make([]call, n)
	for i := range calls {
		pod := testPod(fmt.Sprintf("burst-%d-%s", i, node), shContainer("main", benchForever))
		pod.UID = types.UID(fmt.Sprintf("floor-%s-burst-%d", node, i))
		killAtEnd(b, rt, pod)
		calls[i].sandbox, calls[i].container = floorConfigs(b, rt, pod)
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range calls {
		wg.Go(func() { errs[i] = floorCalls(ctx, cri.Runtime, c.sandbox, c.container) })
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := cri.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}})
		if err == nil && countSuffix(resp.Containers, "-"+node) == n {
			break
		}
		if time.Now().After(deadline) {
			wg.Wait()
			b.Fatalf("not all %d pods running within 5m: %v", n, errs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(t0)
	b.ReportMetric(float64(took.Milliseconds()), "all-running-ms")
	wg.Wait()
	return took
}

// floorCalls makes the three CRI calls that start a pod.
func floorCalls(ctx context.Context, rs runtimeapi.RuntimeServiceClient, sandbox *runtimeapi.PodSandboxConfig, container *runtimeapi.ContainerConfig) error {
	sb, err := rs.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandbox})
	if err != nil {
		return fmt.Errorf("RunPodSandbox: %w", err)
	}
	cc, err := rs.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: container, SandboxConfig: sandbox})
	if err != nil {
		return fmt.Errorf("CreateContainer: %w", err)
	}
	if _, err := rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		return fmt.Errorf("StartContainer: %w", err)
	}
	return nil
}
