package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// stampTo appends "<uptime> <what>" to /out/log: the host's monotonic
// clock (/proc/uptime, which containers share), so that the order and the
// gaps between containers' events are measured from inside them.
func stampTo(what string) string {
	return "read u _ < /proc/uptime; echo \"$u " + what + "\" >> /out/log"
}

// stampedContainer runs script after stamping its start, and stamps
// SIGTERM before it exits (after lingering linger seconds).
func stampedContainer(name, script string, linger int) corev1.Container {
	return corev1.Container{
		Name:            name,
		Image:           env.BusyboxImage,
		ImagePullPolicy: corev1.PullNever,
		Command: []string{"sh", "-c", "trap '" + stampTo("stop "+name) + "; sleep " + strconv.Itoa(linger) + "; exit 0' TERM; " +
			stampTo("start "+name) + "; " + script},
		VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: "/out"}},
	}
}

// readStamps reads the log the containers stamped: the time of each
// event's first occurrence, and the events in order.
func readStamps(t *testing.T, path string) (map[string]float64, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]float64{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		u, what, ok := strings.Cut(line, " ")
		v, err := strconv.ParseFloat(u, 64)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %q", path, line)
		}
		if _, seen := at[what]; !seen {
			at[what] = v
		}
		order = append(order, what)
	}
	return at, order
}

func withOut(pod *corev1.Pod, dir string) *corev1.Pod {
	pod.Spec.Volumes = []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}}
	return pod
}

// TestBinarySidecars runs a pod with two sidecars (init containers with
// restartPolicy Always), a plain init container and an app container:
// proxy (a startup probe that passes 3 s after its start), then logger
// (which exits once the app runs), then setup, then app. It shows that
// they start in that order, setup not before proxy's startup probe passed;
// that the sidecars keep running, ready, beside the app; that logger is
// restarted when it exits while the app keeps running; and that on removal
// the app stops first (it lingers 2 s after SIGTERM), then logger (its
// preStop hook first), then proxy, all within the grace period.
func TestBinarySidecars(t *testing.T) {
	h := newAgent(t)
	out := t.TempDir()
	always := corev1.ContainerRestartPolicyAlways

	proxy := stampedContainer("proxy", "sleep 3; touch /tmp/up; "+sleepForever, 0)
	proxy.RestartPolicy = &always
	proxy.StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/up"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 30,
	}
	// logger's first instance exits with 1 once the app runs.
	logger := stampedContainer("logger", "if [ ! -f /out/logger-ran ]; then touch /out/logger-ran; "+
		"while [ ! -f /out/app-up ]; do sleep 0.2; done; exit 1; fi; "+sleepForever, 0)
	logger.RestartPolicy = &always
	logger.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"sh", "-c", stampTo("prestop logger")}}}}
	setup := stampedContainer("setup", "true", 0)
	app := stampedContainer("app", "touch /out/app-up; "+sleepForever, 2)

	pod := withOut(testPod("sidecars", app), out)
	pod.Spec.InitContainers = []corev1.Container{proxy, logger, setup}
	grace := int64(10)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	h.writeManifest(pod)

	p := h.waitPod("sidecars", "running with logger restarted", 90*time.Second, func(p localapi.Pod) bool {
		l := findContainer(p, "logger")
		return runningContainer("app")(p) && l != nil && l.RestartCount >= 1 && l.State == localapi.StateRunning
	})
	if a := findContainer(p, "app"); a.RestartCount != 0 {
		t.Errorf("app restarted %d times while logger was restarted", a.RestartCount)
	}
	for _, name := range []string{"proxy", "logger"} {
		c := findContainer(p, name)
		if c.State != localapi.StateRunning {
			t.Errorf("sidecar %s is %s, want running", name, c.State)
		}
	}
	p = h.waitPod("sidecars", "ready", 10*time.Second, func(p localapi.Pod) bool { return podReady(p) == "True" })
	for _, name := range []string{"proxy", "logger"} {
		if c := findContainer(p, name); !c.Ready {
			t.Errorf("sidecar %s running but not ready: %+v", name, c)
		}
	}
	if i := slices.IndexFunc(p.InitContainers, func(c localapi.Container) bool { return c.Name == "proxy" }); i != 0 {
		t.Errorf("proxy not first in the init container statuses: %+v", p.InitContainers)
	}

	at, order := readStamps(t, filepath.Join(out, "log"))
	t.Logf("start: proxy, then logger +%.2fs, setup +%.2fs, app +%.2fs (from proxy's start)",
		at["start logger"]-at["start proxy"], at["start setup"]-at["start proxy"], at["start app"]-at["start proxy"])
	wantFirst := []string{"start proxy", "start logger", "start setup", "start app", "start logger"}
	if len(order) < 5 || !slices.Equal(order[:5], wantFirst) {
		t.Errorf("events %v, want %v first", order, wantFirst)
	}
	if gap := at["start logger"] - at["start proxy"]; gap < 3 {
		t.Errorf("logger started %.2fs after proxy, before proxy's startup probe could pass (3 s)", gap)
	}

	removed := uptime(t, "/proc/uptime")
	h.removeManifest("sidecars")
	deadline := time.Now().Add(30 * time.Second)
	for len(h.containers("sidecars", true)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("containers still run 30 s after the removal\n%s", h.log(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	gone := uptime(t, "/proc/uptime") - removed
	at, order = readStamps(t, filepath.Join(out, "log"))
	stops := []string{}
	for _, e := range order {
		if strings.HasPrefix(e, "stop ") || strings.HasPrefix(e, "prestop ") {
			stops = append(stops, e)
		}
	}
	t.Logf("after the removal: app stopped at %.2fs, logger at %.2fs, proxy at %.2fs; all gone at %.2fs (grace 10 s)",
		at["stop app"]-removed, at["stop logger"]-removed, at["stop proxy"]-removed, gone)
	if want := []string{"stop app", "prestop logger", "stop logger", "stop proxy"}; !slices.Equal(stops, want) {
		t.Errorf("stop order %v, want %v", stops, want)
	}
	if gap := at["prestop logger"] - at["stop app"]; gap < 1.8 {
		t.Errorf("logger's preStop ran %.2fs after app's SIGTERM, before app (lingering 2 s) had ended", gap)
	}
	if gone > 10.6 {
		t.Errorf("the pod's containers were gone %.2fs after the removal, past the 10 s grace period", gone)
	}
}

// TestBinaryPostStartBeforeNextStart: the first container's 2 s postStart
// hook ends before the second container starts.
func TestBinaryPostStartBeforeNextStart(t *testing.T) {
	h := newAgent(t)
	out := t.TempDir()
	first := stampedContainer("first", sleepForever, 0)
	first.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"sh", "-c", "sleep 2; " + stampTo("poststart first")}}}}
	second := stampedContainer("second", sleepForever, 0)
	h.writeManifest(withOut(testPod("poststart", first, second), out))
	h.waitPod("poststart", "running", 60*time.Second, runningContainer("second"))

	at, order := readStamps(t, filepath.Join(out, "log"))
	t.Logf("first started, its postStart ended %.2fs later, second started %.2fs later",
		at["poststart first"]-at["start first"], at["start second"]-at["start first"])
	if want := []string{"start first", "poststart first", "start second"}; !slices.Equal(order, want) {
		t.Errorf("events %v, want %v", order, want)
	}
}
