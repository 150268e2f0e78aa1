package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// In-place resize of an API pod (pods/resize): cpu and memory of a running
// container change without a restart (same container, restartCount 0),
// its cgroup and its pod's show the new values, and the status reports
// them; a memory resize under resizePolicy RestartContainer restarts that
// container alone; a resize the node cannot give stays pending,
// Infeasible.
func TestBinaryInPlaceResize(t *testing.T) {
	root, _ := cgroupRoot(t)
	// Its node API on a port of its own: nothing here calls it, and
	// another run on the machine may hold :10250.
	h := newConnectedAgent(t, "--cgroup-root", root, "--address", "127.0.0.1", "--port", freePortOn(t, "127.0.0.1"))
	waitNode(t, "Ready", 30*time.Second, isReady)
	ctx := context.Background()
	pods := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault)

	res := func(cpu, mem string) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	}
	policy := func(cpu, mem corev1.ResourceResizeRestartPolicy) []corev1.ContainerResizePolicy {
		return []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: cpu}, {ResourceName: corev1.ResourceMemory, RestartPolicy: mem}}
	}
	main := shContainer("main", sleepForever)
	main.Resources, main.ResizePolicy = res("200m", "64Mi"), policy(corev1.NotRequired, corev1.NotRequired)
	other := shContainer("other", sleepForever)
	other.Resources, other.ResizePolicy = res("100m", "32Mi"), policy(corev1.NotRequired, corev1.RestartContainer)
	sidecar := shContainer("sidecar", sleepForever)
	sidecar.Resources, sidecar.RestartPolicy = res("50m", "16Mi"), new(corev1.ContainerRestartPolicyAlways)
	spec := h.apiPodSpec("resize", main, other)
	spec.Spec.InitContainers = []corev1.Container{sidecar}
	created := h.createAPIPod(spec)
	name := spec.Name
	running := h.waitAPIPod(name, "running", 90*time.Second, apiPodRunning(created.UID))
	ids := statusIDs(running)
	uid := string(created.UID)

	// cgroup v1 paths: the containers' own, read from inside, and the
	// pod's (Guaranteed: directly under kubepods).
	podCPU := filepath.Join("/sys/fs/cgroup/cpu", root, "kubepods", "pod"+uid)
	podMem := filepath.Join("/sys/fs/cgroup/memory", root, "kubepods", "pod"+uid)
	inside := func(container, file string) string {
		return strings.TrimSpace(h.exec("resize", container, "cat", file))
	}
	checkFiles(t, map[string]string{
		podCPU + "/cpu.cfs_quota_us":      "35000",
		podMem + "/memory.limit_in_bytes": fmt.Sprint((64 + 32 + 16) << 20),
	})

	// main grows in cpu and memory, other shrinks in cpu: in place.
	resize := func(mutate func(p *corev1.Pod)) *corev1.Pod {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(p)
		p, err = pods.UpdateResize(ctx, name, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("resizing pod %s: %v", name, err)
		}
		return p
	}
	resized := resize(func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = res("300m", "96Mi")
		p.Spec.Containers[1].Resources = res("50m", "32Mi")
	})
	done := h.waitAPIPod(name, "resized in place", 60*time.Second, resizeActuated(resized.Generation))
	if got := statusIDs(done); got["main"] != ids["main"] || got["other"] != ids["other"] {
		t.Errorf("containers after the resize: %v, want the same as before: %v", got, ids)
	}
	for _, cs := range done.Status.ContainerStatuses {
		if cs.RestartCount != 0 {
			t.Errorf("container %s: restartCount %d after an in-place resize, want 0", cs.Name, cs.RestartCount)
		}
	}
	checkStatusResources(t, done, "main", res("300m", "96Mi"))
	checkStatusResources(t, done, "other", res("50m", "32Mi"))
	if got, want := inside("main", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), "30000"; got != want {
		t.Errorf("main's cpu.cfs_quota_us = %s, want %s", got, want)
	}
	if got, want := inside("main", "/sys/fs/cgroup/memory/memory.limit_in_bytes"), fmt.Sprint(96<<20); got != want {
		t.Errorf("main's memory.limit_in_bytes = %s, want %s", got, want)
	}
	if got, want := inside("other", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), "5000"; got != want {
		t.Errorf("other's cpu.cfs_quota_us = %s, want %s", got, want)
	}
	checkFiles(t, map[string]string{
		podCPU + "/cpu.cfs_quota_us":      "40000",
		podMem + "/memory.limit_in_bytes": fmt.Sprint((96 + 32 + 16) << 20),
	})

	// other's memory under RestartContainer: other restarts, main does not.
	resized = resize(func(p *corev1.Pod) { p.Spec.Containers[1].Resources = res("50m", "48Mi") })
	done = h.waitAPIPod(name, "other restarted with its new memory", 90*time.Second, func(p *corev1.Pod) bool {
		cs := apiContainerStatus(p, "other")
		return resizeActuated(resized.Generation)(p) && cs != nil && cs.RestartCount == 1
	})
	if got := statusIDs(done); got["main"] != ids["main"] || got["other"] == ids["other"] {
		t.Errorf("containers after other's memory resize: %v; before: %v; want main the same, other new", got, ids)
	}
	checkStatusResources(t, done, "other", res("50m", "48Mi"))
	if got, want := inside("other", "/sys/fs/cgroup/memory/memory.limit_in_bytes"), fmt.Sprint(48<<20); got != want {
		t.Errorf("other's memory.limit_in_bytes = %s, want %s", got, want)
	}

	// Infeasible: more cpu than the node has is refused by the apiserver
	// (its PodResizeValidator) or pending Infeasible here; a sidecar's
	// resize, which nodeagent does not do, pends Infeasible.
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers[0].Resources = res("64", "96Mi")
	if _, err := pods.UpdateResize(ctx, name, p, metav1.UpdateOptions{}); err == nil {
		pending := h.waitAPIPod(name, "pending Infeasible", 30*time.Second, resizePending(corev1.PodReasonInfeasible))
		t.Logf("more cpu than the node has: %s", describeCondition(pending, corev1.PodResizePending))
		resize(func(p *corev1.Pod) { p.Spec.Containers[0].Resources = res("300m", "96Mi") }) // back
	} else if !apierrors.IsForbidden(err) {
		t.Fatalf("resizing beyond the node: %v, want it refused (Forbidden) or pending", err)
	} else {
		t.Logf("more cpu than the node has: the apiserver refuses it: %v", err)
	}
	resize(func(p *corev1.Pod) { p.Spec.InitContainers[0].Resources = res("60m", "16Mi") })
	pending := h.waitAPIPod(name, "the sidecar's resize pending Infeasible", 30*time.Second, resizePending(corev1.PodReasonInfeasible))
	if c := describeCondition(pending, corev1.PodResizePending); !strings.Contains(c, "sidecar") {
		t.Errorf("PodResizePending: %s, want it to name the sidecar", c)
	}
	if got := statusIDs(pending); got["sidecar"] != ids["sidecar"] {
		t.Errorf("sidecar after its refused resize: %s, want %s still", got["sidecar"], ids["sidecar"])
	}
}

// statusIDs are the container IDs the pod's status reports, by name.
func statusIDs(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		out[cs.Name] = cs.ContainerID
	}
	return out
}

func apiContainerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// resizeActuated: the status is of generation gen or later, no resize
// condition is left, and every container runs, as the e2e suite waits.
func resizeActuated(gen int64) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		if p == nil || p.Status.ObservedGeneration < gen {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
				return false
			}
		}
		return apiPodRunning(p.UID)(p)
	}
}

func resizePending(reason string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending && c.Status == corev1.ConditionTrue && c.Reason == reason {
				return true
			}
		}
		return false
	}
}

func describeCondition(p *corev1.Pod, t corev1.PodConditionType) string {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return fmt.Sprintf("%s=%s reason=%q message=%q observedGeneration=%d", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
		}
	}
	return string(t) + " absent"
}

// checkStatusResources compares a container's status resources and
// allocated resources with want.
func checkStatusResources(t *testing.T, p *corev1.Pod, name string, want corev1.ResourceRequirements) {
	t.Helper()
	cs := apiContainerStatus(p, name)
	if cs == nil || cs.Resources == nil {
		t.Errorf("container %s: no status resources", name)
		return
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if got, w := cs.Resources.Limits[r], want.Limits[r]; got.Cmp(w) != 0 {
			t.Errorf("container %s: status resources limits %s = %s, want %s", name, r, got.String(), w.String())
		}
		if got, w := cs.AllocatedResources[r], want.Requests[r]; got.Cmp(w) != 0 {
			t.Errorf("container %s: allocatedResources %s = %s, want %s", name, r, got.String(), w.String())
		}
	}
}
