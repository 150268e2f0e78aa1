package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// TestBinaryGRPCReadinessFollowsServingStatus runs a real gRPC health
// server (internal/grpchealth) on the host's network. Its readiness probe
// asks for the server as a whole, which is SERVING only while /tmp/healthy
// exists: Ready and ContainersReady follow the file both ways. Its
// liveness probe names the service "live", SERVING throughout: the
// container is never restarted although the server as a whole says
// NOT_SERVING for most of the test, so the probe sends the service name.
func TestBinaryGRPCReadinessFollowsServingStatus(t *testing.T) {
	h := newAgent(t)
	port := freePort(t) // host network: a port free on the host
	c := grpcHealthContainer("app", port, "touch /tmp/live", "-file", "/tmp/healthy", "-service", "live=/tmp/live")
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	c.LivenessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port, Service: ptr.To("live")}},
		// 3: the first probe may come before the server listens.
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
	h.writeManifest(grpcHealthPod(t, "grpcready", true, c))
	h.waitPod("grpcready", "running", 30*time.Second, runningContainer("app"))
	time.Sleep(2 * time.Second) // two probes
	p := h.waitPod("grpcready", "listed", time.Second, func(localapi.Pod) bool { return true })
	if podReady(p) != "False" || findContainer(p, "app").Ready {
		t.Fatalf("ready while its server says NOT_SERVING: Ready=%s, conditions %+v", podReady(p), p.Conditions)
	}
	id := h.runningIDs("grpcready")["app"]
	for round, step := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"touch", "/tmp/healthy"}, "True"},
		{[]string{"rm", "/tmp/healthy"}, "False"},
		{[]string{"touch", "/tmp/healthy"}, "True"},
	} {
		execIn(t, h, id, step.cmd...)
		began := time.Now()
		p := h.waitPod("grpcready", "Ready "+step.want, 5*time.Second, func(p localapi.Pod) bool {
			return podReady(p) == step.want && condition(p, "ContainersReady") == step.want &&
				findContainer(p, "app").Ready == (step.want == "True")
		})
		t.Logf("round %d: %s -> Ready %s in %v (a probe period is 1s)", round, strings.Join(step.cmd, " "), step.want, time.Since(began).Round(time.Millisecond))
		if c := findContainer(p, "app"); c.RestartCount != 0 || c.ContainerID != "containerd://"+id {
			t.Fatalf("the container was replaced: %+v", c)
		}
	}
	for _, m := range []struct {
		labels          []string
		atLeast, atMost float64
	}{
		{[]string{`probe_type="Readiness"`, `result="failed"`}, 3, 1e9},     // 2 before the file, 1 after its removal
		{[]string{`probe_type="Readiness"`, `result="successful"`}, 2, 1e9}, // 1 per creation
		{[]string{`probe_type="Liveness"`, `result="successful"`}, 4, 1e9},
		{[]string{`probe_type="Liveness"`, `result="failed"`}, 0, 2}, // only before the server listens
	} {
		if n := h.metricWith(t, "prober_probe_total", m.labels...); n < m.atLeast || n > m.atMost {
			t.Errorf("prober_probe_total{%s} = %v, want %v to %v", strings.Join(m.labels, ","), n, m.atLeast, m.atMost)
		}
	}
}

// TestBinaryGRPCLivenessRestartsNotServing runs two gRPC health servers in
// pods with their own network (CNI: the probe dials the pod's IP). One
// says NOT_SERVING; the other is SERVING (its readiness probe says so) but
// its liveness probe asks for a service it does not know (NOT_FOUND). The
// agent kills and restarts both, and the local API and the timeline say
// the liveness probe failed, and why.
func TestBinaryGRPCLivenessRestartsNotServing(t *testing.T) {
	h := newAgent(t)
	const port = 50051 // each pod has its own network namespace
	liveness := func(service *string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port, Service: service}},
			// 2: the first probe may come before the server listens.
			PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2,
		}
	}
	sick := grpcHealthContainer("app", port, "", "-file", "/tmp/healthy")
	sick.LivenessProbe = liveness(nil)
	unknown := grpcHealthContainer("app", port, "touch /tmp/healthy", "-file", "/tmp/healthy")
	unknown.LivenessProbe = liveness(ptr.To("nosuch"))
	unknown.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	h.writeManifest(grpcHealthPod(t, "grpcsick", false, sick))
	h.writeManifest(grpcHealthPod(t, "grpcunknown", false, unknown))

	began := time.Now()
	h.waitPod("grpcunknown", "ready (its server is SERVING)", 30*time.Second, func(p localapi.Pod) bool {
		return podReady(p) == "True"
	})
	for _, tc := range []struct{ pod, why string }{
		{"grpcsick", `"NOT_SERVING"`},
		{"grpcunknown", "NotFound"},
	} {
		p := h.waitPod(tc.pod, "restarted by its liveness probe", 30*time.Second, func(p localapi.Pod) bool {
			c := findContainer(p, "app")
			return c != nil && c.RestartCount >= 1 && c.LastTermination != nil && c.State == localapi.StateRunning
		})
		t.Logf("%s: restarted by its liveness probe %v after its start", tc.pod, time.Since(began).Round(time.Millisecond))
		if p.PodIP == "" {
			t.Errorf("%s: no pod IP: the probe did not go over the pod's own network", tc.pod)
		}
		last := findContainer(p, "app").LastTermination
		if !strings.Contains(last.Message, "Liveness probe failed") || !strings.Contains(last.Message, tc.why) {
			t.Errorf("%s: last termination = %+v, want it to say the liveness probe failed with %s", tc.pod, last, tc.why)
		}
		detail, err := h.client.Pod(context.Background(), "default", h.podName(tc.pod))
		if err != nil {
			t.Fatal(err)
		}
		var kills []string
		for _, e := range detail.Timeline {
			if strings.Contains(e.Message, "KillContainer") && strings.Contains(e.Message, "Liveness probe failed") {
				kills = append(kills, e.Message)
			}
		}
		if len(kills) == 0 || !strings.Contains(kills[0], tc.why) {
			t.Errorf("%s: the timeline's kills for the liveness probe are %q, want one saying %s:\n%+v", tc.pod, kills, tc.why, detail.Timeline)
		}
	}
}

// grpcHealthContainer runs the gRPC health server on port with args, after
// the shell command setup (if any). The server is the container's main
// process (exec), and it stops at SIGTERM by itself.
func grpcHealthContainer(name string, port int32, setup string, args ...string) corev1.Container {
	cmd := fmt.Sprintf("exec /grpchealth/grpchealth -port %d %s", port, strings.Join(args, " "))
	if setup != "" {
		cmd = setup + " && " + cmd
	}
	return corev1.Container{
		Name:            name,
		Image:           env.BusyboxImage,
		ImagePullPolicy: corev1.PullNever,
		Command:         []string{"sh", "-c", cmd},
		VolumeMounts:    []corev1.VolumeMount{{Name: "grpchealth", MountPath: "/grpchealth", ReadOnly: true}},
	}
}

// grpcHealthPod is testPod with the server's directory mounted.
func grpcHealthPod(t testing.TB, name string, hostNetwork bool, containers ...corev1.Container) *corev1.Pod {
	pod := testPod(name, containers...)
	pod.Spec.HostNetwork = hostNetwork
	pod.Spec.Volumes = []corev1.Volume{{Name: "grpchealth", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: grpcHealthDir(t), Type: ptr.To(corev1.HostPathDirectory)},
	}}}
	return pod
}

// grpcHealthDir builds internal/grpchealth, static, once per test process
// (the Go build cache makes a rebuild take about a second) into a
// directory of its own that the next run overwrites, and returns the
// directory.
func grpcHealthDir(t testing.TB) string {
	t.Helper()
	v, _ := built.LoadOrStore("internal/grpchealth", &builtBinary{})
	bin := v.(*builtBinary)
	bin.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "nodeagent-integration", "grpchealth")
		if bin.err = os.MkdirAll(dir, 0o755); bin.err != nil {
			return
		}
		bin.path = dir
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "grpchealth"), "./internal/grpchealth")
		cmd.Dir = filepath.Join(env.RepoRoot, "test", "integration")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static: the busybox image has no libc
		if out, err := cmd.CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build ./internal/grpchealth: %v\n%s", err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}
