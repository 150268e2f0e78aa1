package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// TestBinaryLivenessRestartsHungServer runs an HTTP server that hangs (it
// is stopped with SIGSTOP: connections are accepted by the kernel, never
// answered) two seconds after each start. Its liveness probe times out,
// the agent kills it, and it restarts, again and again under the
// crash-loop back-off; the local API and the timeline say why.
func TestBinaryLivenessRestartsHungServer(t *testing.T) {
	h := newAgent(t)
	port := freePort(t)
	c := shContainer("web", fmt.Sprintf("mkdir -p /tmp/www && echo ok > /tmp/www/index.html && "+
		"busybox httpd -f -p 127.0.0.1:%d -h /tmp/www & sleep 2; kill -STOP $!; %s", port, sleepForever))
	c.LivenessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/index.html", Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2,
	}
	h.writeManifest(testPod("hung", c))

	p := h.waitPod("hung", "restarted twice by its liveness probe", 90*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "web")
		return c != nil && c.RestartCount >= 2
	})
	last := findContainer(p, "web").LastTermination
	if last == nil || !strings.Contains(last.Message, "Liveness probe failed") {
		t.Errorf("last termination = %+v, want it to say the liveness probe failed", last)
	}
	detail, err := h.client.Pod(context.Background(), "default", h.podName("hung"))
	if err != nil {
		t.Fatal(err)
	}
	var kills int
	for _, e := range detail.Timeline {
		if strings.Contains(e.Message, "KillContainer") && strings.Contains(e.Message, "Liveness probe failed") {
			kills++
		}
	}
	if kills < 2 {
		t.Errorf("the timeline shows %d kills for the liveness probe, want 2 or more:\n%+v", kills, detail.Timeline)
	}
	if n := h.metricWith(t, "prober_probe_total", `probe_type="Liveness"`, `result="failed"`); n < 4 {
		t.Errorf("prober_probe_total{probe_type=Liveness,result=failed} = %v, want at least 4 (2 per kill)", n)
	}
	if n := h.metricWith(t, "prober_probe_total", `probe_type="Liveness"`, `result="successful"`); n < 1 {
		t.Errorf("prober_probe_total{probe_type=Liveness,result=successful} = %v, want the probes before the hang", n)
	}
}

// TestBinaryReadinessFollowsAFile flips a container's readiness both ways
// with a file its exec readiness probe tests: the local API's Ready and
// ContainersReady conditions follow, and the container is never restarted.
func TestBinaryReadinessFollowsAFile(t *testing.T) {
	h := newAgent(t)
	c := shContainer("app", sleepForever)
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	h.writeManifest(testPod("flip", c))
	h.waitPod("flip", "running", 30*time.Second, runningContainer("app"))
	time.Sleep(2 * time.Second) // two probes
	p := h.waitPod("flip", "listed", time.Second, func(localapi.Pod) bool { return true })
	if podReady(p) != "False" || findContainer(p, "app").Ready {
		t.Fatalf("ready without its file: Ready=%s, conditions %+v", podReady(p), p.Conditions)
	}
	id := h.runningIDs("flip")["app"]
	for round, step := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"touch", "/tmp/ready"}, "True"},
		{[]string{"rm", "/tmp/ready"}, "False"},
		{[]string{"touch", "/tmp/ready"}, "True"},
	} {
		execIn(t, h, id, step.cmd...)
		began := time.Now()
		p := h.waitPod("flip", "Ready "+step.want, 5*time.Second, func(p localapi.Pod) bool {
			return podReady(p) == step.want && condition(p, "ContainersReady") == step.want &&
				findContainer(p, "app").Ready == (step.want == "True")
		})
		t.Logf("round %d: %s -> Ready %s in %v (a probe period is 1s)", round, strings.Join(step.cmd, " "), step.want, time.Since(began).Round(time.Millisecond))
		if c := findContainer(p, "app"); c.RestartCount != 0 || c.ContainerID != "containerd://"+id {
			t.Fatalf("the container was replaced: %+v", c)
		}
	}
}

// TestBinaryTCPSocketReadiness probes a server's port with tcpSocket, by
// the port's name: ready while it listens, unready once it is killed.
func TestBinaryTCPSocketReadiness(t *testing.T) {
	h := newAgent(t)
	port := freePort(t)
	c := shContainer("srv", fmt.Sprintf("busybox httpd -f -p 127.0.0.1:%d -h /tmp & echo $! > /tmp/pid; %s", port, sleepForever))
	c.Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: port, HostPort: port}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("web")}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	h.writeManifest(testPod("tcp", c))
	h.waitPod("tcp", "ready while it listens", 30*time.Second, func(p localapi.Pod) bool { return podReady(p) == "True" })
	execIn(t, h, h.runningIDs("tcp")["srv"], "sh", "-c", "kill $(cat /tmp/pid)")
	p := h.waitPod("tcp", "unready once its server is gone", 10*time.Second, func(p localapi.Pod) bool { return podReady(p) == "False" })
	if c := findContainer(p, "srv"); c.RestartCount != 0 || c.State != localapi.StateRunning {
		t.Errorf("container = %+v, want it running, never restarted", c)
	}
}

// TestBinaryStartupProbeProtectsSlowStarter runs two slow starters whose
// liveness probe fails until they have started. One starts within its
// startup window (10 probes, 1 s apart) after 6 s: it is never killed,
// and turns ready. The other never starts: it is killed once its window
// (3 probes) has passed, with the reason.
func TestBinaryStartupProbeProtectsSlowStarter(t *testing.T) {
	h := newAgent(t)
	started := []string{"test", "-f", "/tmp/started"}
	probe := func(failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: started}},
			PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: failures,
		}
	}
	slow := shContainer("app", "sleep 6; touch /tmp/started; "+sleepForever)
	slow.StartupProbe, slow.LivenessProbe = probe(10), probe(1)
	never := shContainer("app", sleepForever)
	never.StartupProbe, never.LivenessProbe = probe(3), probe(1)
	h.writeManifest(testPod("slow", slow))
	h.writeManifest(testPod("never", never))

	began := time.Now()
	p := h.waitPod("slow", "ready after its slow start", 30*time.Second, func(p localapi.Pod) bool {
		return podReady(p) == "True"
	})
	if took := time.Since(began); took < 5*time.Second {
		t.Errorf("ready after %v, before it could have started (6 s)", took)
	}
	n := h.waitPod("never", "killed by its startup probe", 30*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "app")
		return c != nil && c.RestartCount >= 1 && c.LastTermination != nil
	})
	if msg := findContainer(n, "app").LastTermination.Message; !strings.Contains(msg, "Startup probe failed") {
		t.Errorf("last termination message = %q, want it to say the startup probe failed", msg)
	}
	// Its liveness probe (1 failure kills) ran only after the start: the
	// slow starter was never killed.
	time.Sleep(3 * time.Second)
	p = h.waitPod("slow", "listed", time.Second, func(localapi.Pod) bool { return true })
	if c := findContainer(p, "app"); c.RestartCount != 0 || podReady(p) != "True" {
		t.Errorf("slow starter: restarts %d, Ready %s; want 0 and True", c.RestartCount, podReady(p))
	}
}

func podReady(p localapi.Pod) string { return condition(p, "Ready") }

func condition(p localapi.Pod, t string) string {
	for _, c := range p.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// execIn runs a command in a container through the CRI, as a user would
// with crictl exec.
func execIn(t testing.TB, h *agentHarness, id string, cmd ...string) {
	t.Helper()
	resp, err := h.cri.Runtime.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 5})
	if err != nil || resp.GetExitCode() != 0 {
		t.Fatalf("exec %v in %s: %v, exit %d, %s%s", cmd, id, err, resp.GetExitCode(), resp.GetStdout(), resp.GetStderr())
	}
}

// metricWith sums the samples of a metric whose labels hold every one of
// the given name="value" pairs.
func (h *agentHarness) metricWith(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + h.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
next:
	for _, m := range metricLine.FindAllStringSubmatch(string(body), -1) {
		if m[1] != name {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(m[2], l) {
				continue next
			}
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		sum += v
	}
	return sum
}

// TestBinaryProbeMessages: an HTTP liveness probe that stops at a redirect
// to another host succeeds (the container is never restarted) and says so
// in a ProbeWarning event with the kubelet's words; a failing HTTP probe's
// event carries the status code, never the response body.
func TestBinaryProbeMessages(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	cgi := func(name, status, location, body string) corev1.Container {
		port := freePort(t)
		script := fmt.Sprintf(`mkdir -p /tmp/www/cgi-bin && printf '#!/bin/sh\necho "Status: %s"\n%secho\necho %s\n' > /tmp/www/cgi-bin/p && `+
			`chmod +x /tmp/www/cgi-bin/p && busybox httpd -f -p 127.0.0.1:%d -h /tmp/www`, status, location, body, port)
		c := shContainer(name, script)
		c.Ports = []corev1.ContainerPort{{ContainerPort: port}}
		return c
	}
	away := cgi("away", "302 Found", `echo "Location: http://0.0.0.0/"\n`, "moved-elsewhere")
	away.LivenessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Host: "127.0.0.1", Path: "/cgi-bin/p", Port: intstr.FromInt32(away.Ports[0].ContainerPort)}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	broken := cgi("broken", "500 Internal Server Error", "", "secret-token-4711")
	broken.ReadinessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Host: "127.0.0.1", Path: "/cgi-bin/p", Port: intstr.FromInt32(broken.Ports[0].ContainerPort)}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
	pod := h.apiPodSpec("probe-msg", away, broken)
	h.createAPIPod(pod)

	sel := func(reason string) string {
		return "involvedObject.kind=Pod,involvedObject.name=" + pod.Name + ",reason=" + reason
	}
	warning := waitEvent(t, pod.Namespace, sel("ProbeWarning"))
	if want := "Probe terminated redirects, Response body: moved-elsewhere"; !strings.Contains(warning.Message, want) || warning.Type != corev1.EventTypeWarning {
		t.Errorf("ProbeWarning event: %s %q, want a warning containing %q", warning.Type, warning.Message, want)
	}
	unhealthy := waitEvent(t, pod.Namespace, sel("Unhealthy"))
	if !strings.Contains(unhealthy.Message, "statuscode: 500") || strings.Contains(unhealthy.Message, "secret-token-4711") {
		t.Errorf("Unhealthy event %q: want the status code 500, never the body", unhealthy.Message)
	}
	// Liveness probes every second for a few more: the redirect never
	// restarts the container, and the warning is said once.
	time.Sleep(4 * time.Second)
	p := h.waitAPIPod(pod.Name, "listed", 5*time.Second, func(p *corev1.Pod) bool { return p != nil && len(p.Status.ContainerStatuses) == 2 })
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount != 0 {
			t.Errorf("container %s restarted %d times, want never", cs.Name, cs.RestartCount)
		}
	}
	evs, err := env.AdminClient.CoreV1().Events(pod.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: sel("ProbeWarning")})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].Count > 1 {
		t.Errorf("ProbeWarning events %+v, want one, counted once: the same warning is said once per container", evs.Items)
	}
}
