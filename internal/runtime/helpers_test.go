package runtime

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// t0 is the time the test worlds start at.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newPod returns a pod "default/web" (UID u1) with one app container
// "app" and restart policy Always, changed by mods.
func newPod(mods ...func(*corev1.Pod)) *corev1.Pod {
	grace := int64(5)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1"}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func withPolicy(rp corev1.RestartPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.RestartPolicy = rp }
}

// withAppPolicy gives the first app container its own restart policy.
func withAppPolicy(rp corev1.ContainerRestartPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].RestartPolicy = &rp }
}

func withHostNetwork(p *corev1.Pod) { p.Spec.HostNetwork = true }

func withInit(names ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: n, Image: "busybox:1"})
		}
	}
}

func withSidecar(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		always := corev1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name, Image: "busybox:1", RestartPolicy: &always})
	}
}

func withApp(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Image: "busybox:1"})
	}
}

// container returns the spec of the named container of pod.
func container(pod *corev1.Pod, name string) *corev1.Container {
	if c := podContainer(pod, name); c != nil {
		return c
	}
	panic("no container " + name)
}

// withEphemeral adds an ephemeral container named name targeting target
// ("" for none).
func withEphemeral(name, target string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: "busybox"}, TargetContainerName: target})
	}
}

func readySandbox(id string, attempt uint32) SandboxStatus {
	return SandboxStatus{ID: id, State: SandboxReady, Attempt: attempt, IP: "10.0.0.2", CreatedAt: t0.Add(time.Duration(attempt) * time.Minute)}
}

func deadSandbox(id string, attempt uint32) SandboxStatus {
	s := readySandbox(id, attempt)
	s.State = SandboxNotReady
	return s
}

// running, exited, ... describe a container instance of pod's spec named
// name in sandbox sb; the hash matches the spec unless changed later.
func running(pod *corev1.Pod, name, id, sb string) ContainerStatus {
	return ContainerStatus{ID: id, Name: name, SandboxID: sb, State: ContainerStateRunning, Hash: HashContainer(container(pod, name)),
		CreatedAt: t0, StartedAt: t0}
}

func exited(pod *corev1.Pod, name, id, sb string, code int32) ContainerStatus {
	c := running(pod, name, id, sb)
	c.State, c.ExitCode, c.FinishedAt = ContainerStateExited, code, t0.Add(time.Second)
	return c
}

func inState(pod *corev1.Pod, name, id, sb string, state ContainerState) ContainerStatus {
	c := running(pod, name, id, sb)
	c.State = state
	return c
}

func status(sandboxes []SandboxStatus, containers ...ContainerStatus) *PodStatus {
	s := &PodStatus{ID: "u1", Name: "web", Namespace: "default", Sandboxes: sandboxes, Containers: containers}
	if len(sandboxes) > 0 && sandboxes[0].State == SandboxReady {
		s.IPs = []string{sandboxes[0].IP}
	}
	return s
}

func sandboxes(s ...SandboxStatus) []SandboxStatus { return s }

func ptr[T any](v T) *T { return &v }
