package runtime

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// TestSyncPodConfigs pins the sandbox and container configs SyncPod sends,
// labels and annotations included: crictl users and a restarted agent
// rely on them.
func TestSyncPodConfigs(t *testing.T) {
	w := newWorld(t)
	pod := newPod(func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "web", LabelPodName: "spoofed"}
		p.Annotations = map[string]string{"note": "kept"}
		p.Spec.NodeName = "node1"
		c := &p.Spec.Containers[0]
		c.Command, c.Args, c.WorkingDir = []string{"sh", "-c"}, []string{"sleep 1"}, "/work"
		c.TerminationMessagePath = "/dev/termination-log"
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		c.Env = []corev1.EnvVar{
			{Name: "PLAIN", Value: "1"},
			fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
			fieldEnv("POD_UID", "metadata.uid"), fieldEnv("POD_IP", "status.podIP"),
			fieldEnv("NODE", "spec.nodeName"), fieldEnv("APP", "metadata.labels['app']"),
		}
	})
	mounts := ContainerMounts{"app": {{ContainerPath: "/data", HostPath: "/host/data", ReadOnly: true}}}

	res, err := w.sync(pod, mounts)
	if err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	if got, want := w.calls(), []string{"RunPodSandbox", "CreateContainer", "StartContainer"}; !cmp.Equal(got, want) {
		t.Errorf("mutating CRI calls = %v, want %v", got, want)
	}
	if res.Terminal || len(res.Actions) != 2 {
		t.Errorf("result = %+v, want a sandbox and a start, not terminal", res)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Reason != ReasonMissingClusterDNS {
		t.Errorf("warnings = %+v, want MissingClusterDNS", res.Warnings)
	}

	logDir := filepath.Join(w.logRoot, "default_web_u1")
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	wantSandbox := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "u1", Attempt: 0},
		Hostname:     "web",
		LogDirectory: logDir,
		// ClusterFirst on a node without cluster DNS and resolv.conf.
		DnsConfig: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		Labels: map[string]string{
			"app":             "web",
			LabelPodName:      "web",
			LabelPodNamespace: "default",
			LabelPodUID:       "u1",
		},
		Annotations:  map[string]string{"note": "kept"},
		PortMappings: []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080}},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    "/nodeagent/kubepods/besteffort/podu1",
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: ns, Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}},
		},
	}
	if diff := cmp.Diff(wantSandbox, w.cri.sandboxes[0], protocmp.Transform()); diff != "" {
		t.Errorf("sandbox config (-want +got):\n%s", diff)
	}

	kv := func(k, v string) *runtimeapi.KeyValue { return &runtimeapi.KeyValue{Key: k, Value: []byte(v)} }
	wantContainer := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: "app", Attempt: 0},
		Image:      &runtimeapi.ImageSpec{Image: "busybox:1", UserSpecifiedImage: "busybox:1"},
		Command:    []string{"sh", "-c"},
		Args:       []string{"sleep 1"},
		WorkingDir: "/work",
		Envs: []*runtimeapi.KeyValue{kv("PLAIN", "1"), kv("POD_NAME", "web"), kv("POD_NAMESPACE", "default"),
			kv("POD_UID", "u1"), kv("POD_IP", critest.FakePodSandboxIPs[0]), kv("NODE", "node1"), kv("APP", "web")},
		Mounts: []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: "/host/data", Readonly: true}},
		Labels: map[string]string{
			LabelPodName:       "web",
			LabelPodNamespace:  "default",
			LabelPodUID:        "u1",
			LabelContainerName: "app",
		},
		Annotations: map[string]string{
			AnnotationContainerHash:            HashContainer(&pod.Spec.Containers[0]),
			AnnotationRestartCount:             "0",
			AnnotationTerminationGracePeriod:   "5",
			AnnotationContainerResources:       "{}",
			AnnotationTerminationMessagePath:   "/dev/termination-log",
			AnnotationTerminationMessagePolicy: "",
			AnnotationContainerPorts:           `[{"hostPort":8080,"containerPort":80,"protocol":"TCP"}]`,
		},
		LogPath: "app/0.log",
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       &runtimeapi.LinuxContainerResources{CpuShares: 2, OomScoreAdj: 1000}, // BestEffort
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: ns, Seccomp: unconfined},
		},
	}
	if diff := cmp.Diff(wantContainer, w.lastContainerConfig(), protocmp.Transform()); diff != "" {
		t.Errorf("container config (-want +got):\n%s", diff)
	}
}

func TestSyncPodHostNetwork(t *testing.T) {
	w := newWorld(t)
	w.mustSync(newPod(withHostNetwork))
	sb := w.cri.sandboxes[0]
	if sb.Hostname != "" {
		t.Errorf("host network sandbox hostname = %q, want empty (runc cannot set it in the host's UTS namespace)", sb.Hostname)
	}
	if got := sb.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
		t.Errorf("network namespace = %v, want NODE", got)
	}
}

func TestSyncPodIsIdempotent(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	w.calls()
	res := w.mustSync(pod)
	if got := w.calls(); len(got) != 0 || len(res.Actions) != 0 {
		t.Errorf("second sync of an unchanged pod made calls %v, actions %+v; want none", got, res.Actions)
	}
}

func TestSyncPodReplacesChangedContainer(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	old := w.containerID("u1", "app")
	w.calls()

	changed := newPod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox:2" })
	w.mustSync(changed)
	if got, want := w.calls(), []string{"StopContainer", "CreateContainer", "StartContainer"}; !cmp.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if got := w.cri.stops[old]; got != 5 {
		t.Errorf("old container stopped with timeout %d, want the pod's grace period 5", got)
	}
	c := w.lastContainerConfig()
	if c.Metadata.Attempt != 1 || c.Annotations[AnnotationRestartCount] != "1" || c.LogPath != "app/1.log" {
		t.Errorf("replacement: attempt %d, restartCount %q, log %q; want 1, \"1\", app/1.log",
			c.Metadata.Attempt, c.Annotations[AnnotationRestartCount], c.LogPath)
	}
	if c.Annotations[AnnotationContainerHash] != HashContainer(&changed.Spec.Containers[0]) {
		t.Error("replacement does not carry the new spec's hash")
	}
}

// TestSyncPodCrashLoop crashes a container again and again: the first
// crash restarts at once, later ones wait 10 s, then 20 s.
func TestSyncPodCrashLoop(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)

	w.exit(w.containerID("u1", "app"), 3, time.Second)
	w.mustSync(pod)
	if got := w.lastContainerConfig().Metadata.Attempt; got != 1 {
		t.Fatalf("first crash: restarted as attempt %d, want 1 at once", got)
	}

	for i, delay := range []time.Duration{10 * time.Second, 20 * time.Second} {
		w.clock.Step(time.Second)
		w.exit(w.containerID("u1", "app"), 3, time.Second)
		w.calls()
		res, err := w.sync(pod, nil)
		var berr *BackoffError
		if !errors.As(err, &berr) || !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("crash %d: SyncPod error = %v, want a BackoffError", i+2, err)
		}
		if berr.Delay != delay || res.RetryAfter != delay {
			t.Errorf("crash %d: back-off %s, RetryAfter %s, want %s", i+2, berr.Delay, res.RetryAfter, delay)
		}
		if got := w.calls(); len(got) != 0 {
			t.Errorf("crash %d: calls during back-off %v, want none", i+2, got)
		}
		if WaitingReason(err) != "CrashLoopBackOff" {
			t.Errorf("WaitingReason = %q", WaitingReason(err))
		}
		w.clock.Step(delay - time.Millisecond)
		if _, err := w.sync(pod, nil); !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("crash %d: just before the back-off ends: %v, want still backing off", i+2, err)
		}
		w.clock.Step(time.Millisecond)
		w.mustSync(pod)
		if got, want := w.lastContainerConfig().Metadata.Attempt, uint32(i+2); got != want {
			t.Errorf("crash %d: restarted as attempt %d, want %d", i+2, got, want)
		}
	}
}

func TestSyncPodNeverDoesNotRestart(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withPolicy(corev1.RestartPolicyNever))
	w.mustSync(pod)
	w.exit(w.containerID("u1", "app"), 3, time.Second)
	w.calls()
	res := w.mustSync(pod)
	if !res.Terminal || res.Failed {
		t.Errorf("result = %+v, want terminal (not an init failure)", res)
	}
	if got, want := w.calls(), []string{"StopPodSandbox"}; !cmp.Equal(got, want) {
		t.Errorf("calls = %v, want only the sandbox stopped", got)
	}
}

func TestSyncPodInitContainersRunInOrder(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withInit("i0", "i1"))
	names := func() []string {
		var n []string
		for _, c := range w.cri.containers {
			n = append(n, c.Metadata.Name)
		}
		return n
	}
	w.mustSync(pod)
	w.mustSync(pod) // i0 still runs: nothing new
	if got := names(); !cmp.Equal(got, []string{"i0"}) {
		t.Fatalf("created %v, want only i0 while it runs", got)
	}
	w.exit(w.containerID("u1", "i0"), 0, time.Second)
	w.mustSync(pod)
	w.exit(w.containerID("u1", "i1"), 0, time.Second)
	w.mustSync(pod)
	if got := names(); !cmp.Equal(got, []string{"i0", "i1", "app"}) {
		t.Errorf("created %v, want i0, i1, app in order", got)
	}
}

func TestSyncPodInitFailureUnderNeverFailsThePod(t *testing.T) {
	w := newWorld(t)
	pod := newPod(withInit("i0"), withPolicy(corev1.RestartPolicyNever))
	w.mustSync(pod)
	w.exit(w.containerID("u1", "i0"), 1, time.Second)
	res := w.mustSync(pod)
	if !res.Terminal || !res.Failed || !strings.Contains(res.Reason, "init container i0") {
		t.Errorf("result = %+v, want a terminal failure naming i0", res)
	}
}

func TestSyncPodRecreatesLostSandbox(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	w.mustSync(pod)
	w.cri.Lock()
	for _, sb := range w.cri.Sandboxes {
		sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	}
	w.cri.Unlock()
	w.calls()
	w.mustSync(pod)
	if got, want := w.calls(), []string{"StopContainer", "StopPodSandbox", "RunPodSandbox", "CreateContainer", "StartContainer"}; !cmp.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if got := w.cri.sandboxes[1].Metadata.Attempt; got != 1 {
		t.Errorf("new sandbox attempt = %d, want 1", got)
	}
}

// A sandbox left not ready and empty (a RunPodSandbox interrupted by an
// agent's crash) is removed once its replacement runs; one that holds
// containers stays for the collector.
func TestSyncPodRemovesAnEmptyDeadSandbox(t *testing.T) {
	w := newWorld(t)
	pod := newPod()
	ctx := context.Background()
	dead, err := w.cri.RunPodSandbox(ctx, w.rt.sandboxConfig(pod, 0), "")
	if err != nil {
		t.Fatal(err)
	}
	w.cri.Lock()
	w.cri.Sandboxes[dead].State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	w.cri.Unlock()
	w.calls()
	w.mustSync(pod)
	if got, want := w.calls(), []string{"StopPodSandbox", "RunPodSandbox", "RemovePodSandbox", "CreateContainer", "StartContainer"}; !cmp.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	st, err := w.rt.GetPodStatus(ctx, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Sandboxes) != 1 || st.Sandboxes[0].ID == dead {
		t.Errorf("sandboxes = %+v, want only the new one", st.Sandboxes)
	}
}

func TestSyncPodUnsupportedEnvFailsClearly(t *testing.T) {
	w := newWorld(t)
	pod := newPod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "S", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}}
	})
	_, err := w.sync(pod, nil)
	if !errors.Is(err, ErrUnsupported) || WaitingReason(err) != "CreateContainerConfigError" {
		t.Errorf("SyncPod error = %v, want ErrUnsupported", err)
	}
}

// A name still reserved by a request in flight (an agent killed in the
// middle of RunPodSandbox or CreateContainer) is told apart from other
// refusals, so that the caller retries soon; other refusals are not.
func TestNameReservedIsToldApart(t *testing.T) {
	for _, tc := range []struct {
		method   string
		step     error
		err      error
		reserved bool
	}{
		{"RunPodSandbox", ErrCreateSandbox, errors.New(`failed to reserve sandbox name "web_default_u1_0": name "web_default_u1_0" is reserved for "4f2a"`), true},
		{"RunPodSandbox", ErrCreateSandbox, errors.New("failed to setup network for sandbox"), false},
		{"CreateContainer", ErrCreateContainer, errors.New(`failed to reserve container name "app_web_default_u1_0": name "app_web_default_u1_0" is reserved for "9c1e"`), true},
	} {
		w := newWorld(t)
		w.cri.InjectError(tc.method, tc.err)
		_, err := w.sync(newPod(), nil)
		if !errors.Is(err, tc.step) || errors.Is(err, ErrNameReserved) != tc.reserved {
			t.Errorf("%s refused with %q: SyncPod error = %v, want %v with reserved=%v", tc.method, tc.err, err, tc.step, tc.reserved)
		}
	}
}

// A container that never started (the agent killed inside CreateContainer
// leaves it created; inside StartContainer, or a start that failed, leaves
// it exited without a start time) is removed and replaced under its own
// restart count, at once: only instances that ran count as restarts, and
// only they wait out the crash-loop back-off.
func TestSyncPodReplacesANeverStartedContainerWithoutCountingARestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(w *world, id string)
	}{
		{"created", func(*world, string) {}},
		{"exited without a start", func(w *world, id string) {
			w.cri.Lock()
			defer w.cri.Unlock()
			c := w.cri.Containers[id]
			c.State, c.ExitCode, c.StartedAt, c.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, 128, 0, w.clock.Now().UnixNano()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			pod := newPod()
			w.cri.InjectError("StartContainer", errors.New("agent killed"))
			if _, err := w.sync(pod, nil); err == nil {
				t.Fatal("the first sync succeeded; want its start to fail")
			}
			created := w.containerID("u1", "app")
			tc.leave(w, created)
			w.calls()

			w.mustSync(pod)
			if got, want := w.calls(), []string{"RemoveContainer", "CreateContainer", "StartContainer"}; !cmp.Equal(got, want) {
				t.Errorf("calls = %v, want %v", got, want)
			}
			c := w.lastContainerConfig()
			if c.Annotations[AnnotationRestartCount] != "0" || c.Metadata.Attempt != 0 {
				t.Errorf("replacement: restartCount %q, attempt %d; want 0 and 0: the first instance never ran",
					c.Annotations[AnnotationRestartCount], c.Metadata.Attempt)
			}
			st, err := w.rt.GetPodStatus(context.Background(), pod.UID)
			if err != nil {
				t.Fatal(err)
			}
			// (The fake names containers by name and attempt: the replacement
			// has the same ID, and only one container may be left.)
			if len(st.Containers) != 1 || st.Containers[0].State != ContainerStateRunning || st.Containers[0].ID != created {
				t.Errorf("containers = %+v, want the one replacement, running", st.Containers)
			}
		})
	}
}
