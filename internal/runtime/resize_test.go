package runtime

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

func resources(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func withResources(r corev1.ResourceRequirements, policy ...corev1.ContainerResizePolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources, p.Spec.Containers[0].ResizePolicy = r, policy
	}
}

var restartOnMemory = corev1.ContainerResizePolicy{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}

// A running container whose spec asks other cpu or memory than it runs
// with (ContainerStatus.Resources) is resized in place, or restarted when
// its resizePolicy says RestartContainer for a changed resource; one
// whose resources are not known is left alone.
func TestPlanResize(t *testing.T) {
	was := newPod(withResources(resources("200m", "64Mi"), restartOnMemory))
	runningAs := func(r *corev1.ResourceRequirements) ContainerStatus {
		c := running(was, "app", "c1", "sb1")
		c.Resources = r
		return c
	}
	old := resources("200m", "64Mi")
	for _, tc := range []struct {
		name        string
		pod         *corev1.Pod
		st          ContainerStatus
		wantResize  []resizeStep
		wantRestart bool
	}{
		{name: "unchanged", pod: was, st: runningAs(&old)},
		{name: "cpu: in place", pod: newPod(withResources(resources("300m", "64Mi"), restartOnMemory)), st: runningAs(&old),
			wantResize: []resizeStep{{ID: "c1", Name: "app"}}},
		{name: "memory under RestartContainer: restart", pod: newPod(withResources(resources("200m", "96Mi"), restartOnMemory)), st: runningAs(&old),
			wantRestart: true},
		{name: "memory under the default policy: in place", pod: newPod(withResources(resources("200m", "96Mi"))), st: func() ContainerStatus {
			c := running(newPod(withResources(old)), "app", "c1", "sb1")
			c.Resources = &old
			return c
		}(),
			wantResize: []resizeStep{{ID: "c1", Name: "app"}}},
		{name: "a limit added to memory under RestartContainer: restart",
			pod: newPod(withResources(resources("200m", "64Mi"), restartOnMemory)),
			st:  runningAs(&corev1.ResourceRequirements{Requests: old.Requests, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}), wantRestart: true},
		{name: "equal quantities spelled otherwise: unchanged", pod: newPod(withResources(resources("0.2", "65536Ki"), restartOnMemory)), st: runningAs(&old)},
		{name: "unknown resources (an earlier agent's container): left alone", pod: newPod(withResources(resources("300m", "96Mi"), restartOnMemory)), st: runningAs(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := computePlan(tc.pod, status(sandboxes(readySandbox("sb1", 0)), tc.st), nil)
			if diff := cmp.Diff(tc.wantResize, p.Resize, cmp.AllowUnexported(resizeStep{})); diff != "" {
				t.Errorf("resize steps (-want +got):\n%s", diff)
			}
			restarted := len(p.Kill) == 1 && len(p.Start) == 1 && p.Start[0].Name == "app"
			if restarted != tc.wantRestart || !tc.wantRestart && (len(p.Kill) > 0 || len(p.Start) > 0) {
				t.Errorf("kills %v, starts %v; want a restart of app: %v", p.Kill, p.Start, tc.wantRestart)
			}
		})
	}
}

// The hash that decides a replacement leaves cpu and memory out, not the
// other resources; a container an earlier agent hashed whole still
// matches its spec.
func TestHashLeavesResizableResourcesOut(t *testing.T) {
	a := newPod(withResources(resources("200m", "64Mi"))).Spec.Containers[0]
	b := newPod(withResources(resources("1", "1Gi"))).Spec.Containers[0]
	if HashContainer(&a) != HashContainer(&b) {
		t.Error("containers differing in cpu and memory only hash differently")
	}
	c := *a.DeepCopy()
	c.Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	if HashContainer(&a) == HashContainer(&c) {
		t.Error("containers differing in ephemeral-storage hash the same")
	}
	if a.Resources.Limits.Cpu().String() != "200m" {
		t.Errorf("hashing changed the container: %v", a.Resources)
	}
	pod := newPod(withResources(resources("200m", "64Mi")))
	st := running(pod, "app", "c1", "sb1")
	st.Hash = "5f0c2e9c1b1cbb53" // not a hash of this spec in any form
	if !specChanged(&pod.Spec.Containers[0], &st) {
		t.Error("a foreign hash is taken for this spec")
	}
	st.Hash = wholeSpecHash(&pod.Spec.Containers[0])
	if specChanged(&pod.Spec.Containers[0], &st) {
		t.Error("the whole-spec hash of an earlier agent is taken for a changed spec")
	}
}

// records is an in-memory ResizeRecords.
type records struct {
	mu sync.Mutex
	m  map[string]corev1.ResourceRequirements
}

func (r *records) Resized(_ types.UID, _, id string) (corev1.ResourceRequirements, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[id]
	return v, ok
}

func (r *records) SetResized(_ types.UID, _, id string, v corev1.ResourceRequirements) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[id] = v
	return nil
}

// SyncPod resizes in place through UpdateContainerResources, remembers
// what it gave, and does nothing more once the container runs with its
// spec; a memory resize under RestartContainer replaces the container.
func TestSyncPodResizes(t *testing.T) {
	w := newWorld(t)
	rec := &records{m: map[string]corev1.ResourceRequirements{}}
	w.rt.opts.Resized = rec
	w.mustSync(newPod(withResources(resources("200m", "64Mi"), restartOnMemory)))
	w.calls()

	grown := newPod(withResources(resources("300m", "64Mi"), restartOnMemory))
	res := w.mustSync(grown)
	if got := w.calls(); !slices.Equal(got, []string{"UpdateContainerResources"}) {
		t.Fatalf("CRI calls of a cpu resize: %v, want an update alone", got)
	}
	if len(res.Actions) != 1 || res.Actions[0].Kind != ActionResizeContainer || res.Actions[0].Err != nil {
		t.Errorf("actions: %+v, want one resize", res.Actions)
	}
	st, err := w.rt.GetPodStatus(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Containers[0].Resources.Limits.Cpu().String(); got != "300m" {
		t.Errorf("the container's status says cpu limit %s after the resize, want 300m", got)
	}
	w.mustSync(grown)
	if got := w.calls(); len(got) != 0 {
		t.Errorf("CRI calls once resized: %v, want none", got)
	}

	w.mustSync(newPod(withResources(resources("300m", "96Mi"), restartOnMemory)))
	got := w.calls()
	if slices.Contains(got, "UpdateContainerResources") || !slices.Contains(got, "StopContainer") || !slices.Contains(got, "CreateContainer") {
		t.Errorf("CRI calls of a memory resize under RestartContainer: %v, want a stop and a create", got)
	}
}
