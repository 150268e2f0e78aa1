package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// The pod's environment as the kubelet makes it: $(VAR) expansion in env
// values, command and args; service variables in connected mode; and
// termination messages.

// terminated is a pod condition: the container has exited.
func terminated(container string) func(localapi.Pod) bool {
	return func(p localapi.Pod) bool {
		c := findContainer(p, container)
		return c != nil && c.State == localapi.StateTerminated
	}
}

// containerLog reads the log of a pod's container's first instance, as
// the runtime wrote it, without the CRI prefix of each line.
func (h *agentHarness) containerLog(p localapi.Pod, container string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "logs", "default_"+p.Name+"_"+p.UID, container, "0.log"))
	if err != nil {
		h.t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if f := strings.SplitN(line, " ", 4); len(f) == 4 {
			b.WriteString(f[3] + "\n")
		}
	}
	return b.String()
}

// envOf runs env in a running container.
func (h *agentHarness) envOf(name, container string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(h.exec(name, container, "env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

func TestBinaryEnvExpansion(t *testing.T) {
	h := newAgent(t)
	c := corev1.Container{
		Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{
			envVar("A", "alpha"),
			envVar("B", "$(A)-beta"),
			envVar("C", "$$(A)"),
			envVar("D", "$(NOPE)"),
			envVar("E", "[$(A)$(B)] $( $"),
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			envVar("F", "on-$(NODE)"),
		},
		// sh -c SCRIPT ARG0 ARG1 ...: the args are the script's $0, $1, ...
		Command: []string{"sh", "-c", `for a in "$0" "$@"; do echo "arg=$a"; done; echo "B=$B"; echo "C=$C"; echo "D=$D"; echo "E=$E"; echo "F=$F"`},
		Args:    []string{"$(A)", "$(B)/$(F)", "$$(A)", "$(NOPE)", "$(A"},
	}
	pod := testPod("expand", c)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	h.writeManifest(pod)
	p := h.waitPod("expand", "terminated", 60*time.Second, terminated("main"))
	got := h.containerLog(p, "main")
	want := "arg=alpha\n" +
		"arg=alpha-beta/on-" + h.node + "\n" +
		"arg=$(A)\n" +
		"arg=$(NOPE)\n" +
		"arg=$(A\n" +
		"B=alpha-beta\n" +
		"C=$(A)\n" +
		"D=$(NOPE)\n" +
		"E=[alphaalpha-beta] $( $\n" +
		"F=on-" + h.node + "\n"
	if got != want {
		t.Errorf("the container printed:\n%s\nwant:\n%s", got, want)
	}
	// Standalone: no service variables.
	if strings.Contains(got, "KUBERNETES_") {
		t.Errorf("standalone pod sees service variables:\n%s", got)
	}
}

// A connected agent gives every pod the kubernetes Service's variables,
// and those of the Services of its namespace unless enableServiceLinks is
// false; static pods too; and they can be referenced.
func TestBinaryServiceEnv(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	ctx := context.Background()
	services := env.AdminClient.CoreV1().Services(metav1.NamespaceDefault)
	kubernetes, err := services.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcName := "envtest-" + randomSuffix()
	svc, err := services.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = services.Delete(context.Background(), svcName, metav1.DeleteOptions{}) })
	prefix := strings.ToUpper(strings.ReplaceAll(svcName, "-", "_"))
	kip, sip := kubernetes.Spec.ClusterIP, svc.Spec.ClusterIP

	main := shContainer("main", sleepForever)
	main.Env = []corev1.EnvVar{envVar("API_URL", "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)")}
	links := h.apiPodSpec("links", main)
	noLinks := h.apiPodSpec("nolinks", main)
	noLinks.Spec.EnableServiceLinks = ptr.To(false)
	for _, p := range []*corev1.Pod{links, noLinks} {
		created := h.createAPIPod(p)
		h.waitAPIPod(p.Name, "Running in the apiserver", 60*time.Second, apiPodRunning(created.UID))
	}

	kubernetesVars := map[string]string{
		"KUBERNETES_SERVICE_HOST":      kip,
		"KUBERNETES_SERVICE_PORT":      "443",
		"KUBERNETES_PORT":              "tcp://" + kip + ":443",
		"KUBERNETES_PORT_443_TCP":      "tcp://" + kip + ":443",
		"KUBERNETES_PORT_443_TCP_ADDR": kip,
		"API_URL":                      "https://" + kip + ":443",
	}
	svcVars := map[string]string{
		prefix + "_SERVICE_HOST":      sip,
		prefix + "_SERVICE_PORT":      "80",
		prefix + "_SERVICE_PORT_HTTP": "80",
		prefix + "_SERVICE_PORT_DNS":  "53",
		prefix + "_PORT":              "tcp://" + sip + ":80",
		prefix + "_PORT_53_UDP":       "udp://" + sip + ":53",
		prefix + "_PORT_53_UDP_PROTO": "udp",
		prefix + "_PORT_53_UDP_PORT":  "53",
		prefix + "_PORT_80_TCP_ADDR":  sip,
	}
	check := func(t *testing.T, name string, wantSvc bool) {
		got := h.envOf(name, "main")
		for k, v := range kubernetesVars {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k, v := range svcVars {
			switch val, ok := got[k]; {
			case wantSvc && val != v:
				t.Errorf("%s = %q, want %q", k, val, v)
			case !wantSvc && ok:
				t.Errorf("%s = %q with enableServiceLinks false", k, val)
			}
		}
	}
	t.Run("enableServiceLinks default", func(t *testing.T) { check(t, "links", true) })
	t.Run("enableServiceLinks false", func(t *testing.T) { check(t, "nolinks", false) })
	t.Run("static pod", func(t *testing.T) {
		h.writeManifest(testPod("static", main))
		h.waitPod("static", "running", 60*time.Second, runningContainer("main"))
		check(t, "static", true)
	})
	// As under the kubelet: a deleted Service's variables are gone from
	// the containers that start after it (here a new pod's), while those
	// that run keep theirs.
	t.Run("deleted Service", func(t *testing.T) {
		if err := services.Delete(ctx, svcName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The informer sees the deletion within moments; a pod created
		// after it has propagated starts without the variables.
		time.Sleep(500 * time.Millisecond)
		after := h.apiPodSpec("after", main)
		created := h.createAPIPod(after)
		h.waitAPIPod(after.Name, "Running in the apiserver", 60*time.Second, apiPodRunning(created.UID))
		check(t, "after", false)
		if got := h.envOf("links", "main")[prefix+"_SERVICE_HOST"]; got != sip {
			t.Errorf("the running container's %s_SERVICE_HOST = %q, want %q kept", prefix, got, sip)
		}
	})
}

// A pod from the apiserver: its status there carries the message.
func TestBinaryTerminationMessageAPIPod(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	c := corev1.Container{Name: "main", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command: []string{"sh", "-c", "printf 'bye from the API pod' > /dev/termination-log; exit 4"}}
	pod := h.apiPodSpec("tmsg-api", c)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "Failed with the message", 60*time.Second, func(p *corev1.Pod) bool {
		if p == nil || p.UID != created.UID || len(p.Status.ContainerStatuses) != 1 {
			return false
		}
		st := p.Status.ContainerStatuses[0].State.Terminated
		return st != nil && st.ExitCode == 4 && st.Message == "bye from the API pod"
	})
}

// A container's termination message: what it wrote to its
// terminationMessagePath (any user may write it), or with
// FallbackToLogsOnError and a failure, its log's end; kept across a
// restart of the agent.
func TestBinaryTerminationMessage(t *testing.T) {
	h := newAgent(t)
	file := corev1.Container{Name: "file", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command: []string{"sh", "-c", "echo noise; printf 'all done: 42' > /dev/termination-log"}}
	nonRoot := corev1.Container{Name: "nonroot", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command:                []string{"sh", "-c", "printf 'from uid %s' $(id -u) > /tmp/msg; exit 1"},
		SecurityContext:        &corev1.SecurityContext{RunAsUser: ptr.To[int64](1234)},
		TerminationMessagePath: "/tmp/msg"}
	fallback := corev1.Container{Name: "fallback", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command:                  []string{"sh", "-c", "i=0; while [ $i -lt 100 ]; do echo line $i; i=$((i+1)); done; echo oops; exit 3"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
	fallbackOK := corev1.Container{Name: "fallback-ok", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command:                  []string{"sh", "-c", "echo fine"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
	fallbackFile := corev1.Container{Name: "fallback-file", Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
		Command:                  []string{"sh", "-c", "echo noise; printf 'wrote it' > /dev/termination-log; exit 2"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
	pod := testPod("tmsg", file, nonRoot, fallback, fallbackOK, fallbackFile)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	h.writeManifest(pod)

	// The last 80 lines (line 21 .. line 99, oops) are under 2 KiB. (All
	// on stdout: the runtime copies stdout and stderr apart, so their
	// lines' order in the log is not the order they were written in.)
	var tail strings.Builder
	for i := 21; i < 100; i++ {
		tail.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	tail.WriteString("oops\n")
	want := map[string]string{
		"file":          "all done: 42",
		"nonroot":       "from uid 1234",
		"fallback":      tail.String(),
		"fallback-ok":   "",
		"fallback-file": "wrote it",
	}
	check := func(when string) {
		p := h.waitPod("tmsg", "finished", 60*time.Second, func(p localapi.Pod) bool {
			for name := range want {
				if !terminated(name)(p) {
					return false
				}
			}
			return true
		})
		for name, w := range want {
			c := findContainer(p, name)
			if c.Message != w {
				t.Errorf("%s: container %s: message %q, want %q", when, name, c.Message, w)
			}
		}
	}
	check("first run")
	h.stop()
	h.start()
	check("after the agent's restart")
}
