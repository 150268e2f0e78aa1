package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

func TestGetPodStatus(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	first := w.containerID("u1", "app")
	w.exit(first, 3, 2*time.Second)
	w.cri.Lock()
	w.cri.Containers[first].Reason, w.cri.Containers[first].Message = "Error", "boom"
	w.cri.Unlock()
	w.mustSync(pod)

	st, err := w.rt.GetPodStatus(context.Background(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	hash := HashContainer(&pod.Spec.Containers[0])
	none := &corev1.ResourceRequirements{} // what the pod's containers ask
	finished := w.clock.Now()
	want := &PodStatus{
		ID: "u1", Name: "web", Namespace: "default",
		IPs:       critest.FakePodSandboxIPs,
		Sandboxes: []SandboxStatus{{ID: "web_default_u1_0", State: SandboxReady, IP: critest.FakePodSandboxIPs[0]}},
		Containers: []ContainerStatus{
			{ID: "web_default_u1_0_app_1", Name: "app", SandboxID: "web_default_u1_0", State: ContainerStateRunning,
				RestartCount: 1, Image: "busybox:1", ImageRef: "busybox:1", Hash: hash, Resources: none},
			{ID: first, Name: "app", SandboxID: "web_default_u1_0", State: ContainerStateExited,
				StartedAt: finished.Add(-2 * time.Second), FinishedAt: finished, ExitCode: 3, Reason: "Error", Message: "boom",
				RestartCount: 0, Image: "busybox:1", ImageRef: "busybox:1", Hash: hash, Resources: none},
		},
	}
	// Creation times, and the running container's start, come from the
	// fake's wall clock: check they are set, then leave them out.
	if st.Containers[0].StartedAt.IsZero() {
		t.Error("running container lacks its start time")
	}
	st.Containers[0].StartedAt = time.Time{}
	for i := range st.Containers {
		if st.Containers[i].CreatedAt.IsZero() {
			t.Errorf("container %d lacks its creation time", i)
		}
		st.Containers[i].CreatedAt = time.Time{}
	}
	st.Sandboxes[0].CreatedAt = time.Time{}
	if diff := cmp.Diff(want, st, cmpopts.EquateApproxTime(time.Microsecond)); diff != "" {
		t.Errorf("GetPodStatus (-want +got):\n%s", diff)
	}
}

func TestGetPodStatusOfUnknownPod(t *testing.T) {
	w := newWorld(t)
	st, err := w.rt.GetPodStatus(context.Background(), "nope")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&PodStatus{ID: "nope"}, st); diff != "" {
		t.Errorf("status of an unknown pod (-want +got):\n%s", diff)
	}
}

// TestGetPodsAdoption: a new Runtime over the same runtime (a restarted
// agent) finds the pods by their labels alone and leaves their containers
// alone when synced with the same spec. Objects without the labels are not
// the agent's.
func TestGetPodsAdoption(t *testing.T) {
	w := newWorld(t)
	web := newPod()
	db := newPod(func(p *corev1.Pod) { p.UID, p.Name, p.Namespace = "u2", "db", "kube-system" }, withInit("setup"))
	w.mustSync(web)
	w.mustSync(db)
	ctx := context.Background()
	if _, err := w.cri.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "foreign", Namespace: "x", Uid: "f"},
	}, ""); err != nil {
		t.Fatal(err)
	}

	adopter := w.newRuntime()
	pods, err := adopter.GetPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ID, Name, Namespace string
		Sandboxes           int
		Containers          []string
	}
	var got []summary
	for _, p := range pods {
		s := summary{ID: string(p.ID), Name: p.Name, Namespace: p.Namespace, Sandboxes: len(p.Sandboxes)}
		for _, c := range p.Containers {
			s.Containers = append(s.Containers, c.Name+":"+string(c.State))
		}
		got = append(got, s)
	}
	want := []summary{
		{ID: "u1", Name: "web", Namespace: "default", Sandboxes: 1, Containers: []string{"app:running"}},
		{ID: "u2", Name: "db", Namespace: "kube-system", Sandboxes: 1, Containers: []string{"setup:running"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetPods (-want +got):\n%s", diff)
	}
	if h := pods[0].Containers[0].Hash; h != HashContainer(&web.Spec.Containers[0]) {
		t.Errorf("listed hash %q, want the spec's", h)
	}

	w.calls()
	st, err := adopter.GetPodStatus(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := adopter.SyncPod(ctx, web, nil, st, SyncHooks{})
	if err != nil || len(res.Actions) != 0 {
		t.Errorf("adopted sync: actions %+v, err %v; want none", res.Actions, err)
	}
	if got := w.calls(); len(got) != 0 {
		t.Errorf("adopted sync made calls %v, want none", got)
	}
}
