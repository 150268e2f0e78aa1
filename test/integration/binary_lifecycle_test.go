package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A manifest written runs; edited, its old container stops before the new
// one starts; removed, its pod is stopped and removed.
func TestBinaryStaticPodLifecycle(t *testing.T) {
	h := newAgent(t)
	path := h.writeManifest(testPod("life", shContainer("main", "echo gen1; "+sleepForever)))

	p := h.waitPod("life", "running", 60*time.Second, runningContainer("main"))
	if p.Source != "file" || p.Origin != path || p.ConfigHash == "" || p.Phase != "Running" {
		t.Errorf("pod = source %q origin %q hash %q phase %q; want file, %s, a hash, Running", p.Source, p.Origin, p.ConfigHash, p.Phase, path)
	}
	running := h.runningIDs("life")
	if len(running) != 1 || !strings.HasSuffix(findContainer(p, "main").ContainerID, running["main"]) {
		t.Fatalf("CRI running containers = %v; the agent reports %s", running, findContainer(p, "main").ContainerID)
	}
	detail, err := h.client.Pod(context.Background(), "default", h.podName("life"))
	if err != nil || len(detail.Timeline) == 0 {
		t.Errorf("GET the pod: %d timeline entries, %v; want its timeline", len(detail.Timeline), err)
	}

	// Edit: poll the CRI every 20 ms; two generations must never run at once.
	var overlap atomic.Int32
	stopPolling := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stopPolling:
				return
			case <-time.After(20 * time.Millisecond):
			}
			resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
				State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
				LabelSelector: map[string]string{"io.kubernetes.pod.name": h.podName("life")},
			}})
			if err == nil && len(resp.Containers) > 1 {
				overlap.Add(1)
			}
		}
	}()
	edited := time.Now()
	h.writeManifest(testPod("life", shContainer("main", "echo gen2; "+sleepForever)))
	p2 := h.waitPod("life", "running its new generation", 5*time.Second+30*time.Second, func(q localapi.Pod) bool {
		return q.UID != p.UID && runningContainer("main")(q)
	})
	took := time.Since(edited)
	close(stopPolling)
	<-polled
	if n := overlap.Load(); n > 0 {
		t.Errorf("two generations of the pod ran at once in %d CRI polls", n)
	}
	t.Logf("edit -> new container running: %v", took)
	if took > 5*time.Second+10*time.Second {
		t.Errorf("the new generation took %v to run; the grace period is 5s", took)
	}
	if ids := h.runningIDs("life"); len(ids) != 1 || ids["main"] == running["main"] {
		t.Errorf("running after the edit: %v, want one new container (the old was %s)", ids, running["main"])
	}

	// Remove: the pod is stopped, then its sandbox removed.
	h.removeManifest("life")
	deadline := time.Now().Add(60 * time.Second)
	for len(h.sandboxes("life")) > 0 || len(h.containers("life", false)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("60s after the manifest was removed the runtime still holds %d sandbox(es), %d container(s) of the pod",
				len(h.sandboxes("life")), len(h.containers("life", false)))
		}
		time.Sleep(50 * time.Millisecond)
	}
	pods, _ := h.client.Pods(context.Background())
	for _, q := range pods {
		if q.Name == h.podName("life") && q.UID == p2.UID && q.WorkerPhase == "sync" {
			t.Errorf("the agent still syncs the removed pod: %+v", q)
		}
	}
}

// Init containers run to completion, in order, before the app container.
func TestBinaryInitContainerRunsFirst(t *testing.T) {
	h := newAgent(t)
	pod := testPod("init", shContainer("app", "test -f /work/done || exit 3; "+sleepForever))
	pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	mount := []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}
	pod.Spec.Containers[0].VolumeMounts = mount
	first, second := shContainer("first", "sleep 1; echo 1 > /work/first"), shContainer("second", "test -f /work/first && touch /work/done")
	first.VolumeMounts, second.VolumeMounts = mount, mount
	pod.Spec.InitContainers = []corev1.Container{first, second}
	h.writeManifest(pod)

	p := h.waitPod("init", "running its app container", 60*time.Second, runningContainer("app"))
	for _, name := range []string{"first", "second"} {
		c := findContainer(p, name)
		if c == nil || c.State != localapi.StateTerminated || c.ExitCode == nil || *c.ExitCode != 0 {
			t.Errorf("init container %s: %+v, want terminated with exit code 0", name, c)
		}
	}
	if c := findContainer(p, "app"); c.RestartCount != 0 {
		t.Errorf("app restarted %d times: it started before the init containers finished", c.RestartCount)
	}
	// The CRI's own clocks: each init container finished before the next
	// container started.
	times := map[string][2]int64{}
	for _, c := range h.containers("init", false) {
		st, err := h.cri.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
		if err != nil {
			t.Fatal(err)
		}
		times[c.GetMetadata().GetName()] = [2]int64{st.Status.StartedAt, st.Status.FinishedAt}
	}
	if !(times["first"][1] <= times["second"][0] && times["second"][1] <= times["app"][0]) {
		t.Errorf("CRI start/finish times (ns) = %v; want first, then second, then app", times)
	}
}

// Removing a manifest stops its containers with exactly the pod's grace
// period: with 2 s a container's TERM trap runs, with 0 the container is
// killed at once and never sees TERM (the kubelet would still give it a
// second or two). The trap leaves its mark in a hostPath directory, which
// outlives the pod.
func TestBinaryRemovalHonoursTheGracePeriod(t *testing.T) {
	h := newAgent(t)
	marks := t.TempDir()
	for _, grace := range []int64{2, 0} {
		name := fmt.Sprintf("grace-%d", grace)
		pod := testPod(name, corev1.Container{
			Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
			Command:      []string{"sh", "-c", "trap 'touch /marks/" + name + "; exit 0' TERM; touch /marks/" + name + ".ready; while true; do sleep 0.1; done"},
			VolumeMounts: []corev1.VolumeMount{{Name: "marks", MountPath: "/marks"}},
		})
		pod.Spec.TerminationGracePeriodSeconds = &grace
		pod.Spec.Volumes = []corev1.Volume{{Name: "marks", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: marks}}}}
		h.writeManifest(pod)
	}
	for _, name := range []string{"grace-2", "grace-0"} {
		h.waitPod(name, "running", 60*time.Second, runningContainer("main"))
		deadline := time.Now().Add(10 * time.Second)
		for _, err := os.Stat(filepath.Join(marks, name+".ready")); err != nil; _, err = os.Stat(filepath.Join(marks, name+".ready")) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the container never set its trap: %v", name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, tc := range []struct {
		name     string
		wantTERM bool
	}{{"grace-2", true}, {"grace-0", false}} {
		start := time.Now()
		h.removeManifest(tc.name)
		deadline := time.Now().Add(60 * time.Second)
		for len(h.containers(tc.name, true)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still running 60s after its manifest was removed", tc.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: removed -> stopped in %v", tc.name, time.Since(start).Round(time.Millisecond))
		_, err := os.Stat(filepath.Join(marks, tc.name))
		if sawTERM := err == nil; sawTERM != tc.wantTERM {
			t.Errorf("%s: the container saw TERM: %v, want %v", tc.name, sawTERM, tc.wantTERM)
		}
	}
}
