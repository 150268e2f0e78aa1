package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An ephemeral container added to a running API pod (what kubectl debug
// does) starts once, beside the pod's containers, which keep running; one
// that targets a container shares its process namespace; their statuses
// reach the apiserver; neither restarts when it exits.
func TestBinaryEphemeralContainers(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	main := shContainer("main", "echo main-marker > /dev/null; exec sleep 100000")
	pod := h.apiPodSpec("debugged", main)
	created := h.createAPIPod(pod)
	h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(created.UID))
	mainID := h.runningIDs("debugged")["main"]

	add := func(ec corev1.EphemeralContainer) {
		t.Helper()
		pods := env.AdminClient.CoreV1().Pods(pod.Namespace)
		cur, err := pods.Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, ec)
		if _, err := pods.UpdateEphemeralContainers(context.Background(), pod.Name, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("adding ephemeral container %s: %v", ec.Name, err)
		}
	}
	ephemeralState := func(p *corev1.Pod, name string) *corev1.ContainerState {
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == name {
				return &s.State
			}
		}
		return nil
	}
	common := func(name, script string) corev1.EphemeralContainerCommon {
		return corev1.EphemeralContainerCommon{Name: name, Image: env.BusyboxImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"sh", "-c", script}}
	}

	add(corev1.EphemeralContainer{EphemeralContainerCommon: common("debugger", "while true; do echo polo; sleep 1; done")})
	h.waitAPIPod(pod.Name, "the ephemeral container running", 60*time.Second, func(p *corev1.Pod) bool {
		st := ephemeralState(p, "debugger")
		return st != nil && st.Running != nil
	})
	if out := h.exec("debugged", "debugger", "echo", "marco"); out != "marco\n" {
		t.Errorf("exec in the ephemeral container: %q, want marco", out)
	}
	// Without a target it has its own process namespace: main's sleep is
	// not among its processes.
	if out := h.exec("debugged", "debugger", "ps", "-o", "args"); strings.Contains(out, "sleep 100000") {
		t.Errorf("the untargeted ephemeral container sees main's processes:\n%s", out)
	}

	add(corev1.EphemeralContainer{EphemeralContainerCommon: common("peek", "ps -o args; exit 3"), TargetContainerName: "main"})
	p := h.waitAPIPod(pod.Name, "the targeted ephemeral container exited", 60*time.Second, func(p *corev1.Pod) bool {
		st := ephemeralState(p, "peek")
		return st != nil && st.Terminated != nil
	})
	if st := ephemeralState(p, "peek"); st.Terminated.ExitCode != 3 {
		t.Errorf("peek terminated %+v, want exit code 3", st.Terminated)
	}
	logged, err := os.ReadFile(filepath.Join(h.dir, "logs", pod.Namespace+"_"+pod.Name+"_"+string(created.UID), "peek", "0.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "sleep 100000") {
		t.Errorf("the targeted ephemeral container's ps shows no sleep of main:\n%s", logged)
	}
	// It is never restarted, and the pod's own container was never touched.
	time.Sleep(3 * time.Second)
	p = h.waitAPIPod(pod.Name, "listed", 5*time.Second, func(p *corev1.Pod) bool { return p != nil })
	for _, s := range p.Status.EphemeralContainerStatuses {
		if s.RestartCount != 0 {
			t.Errorf("ephemeral container %s restarted %d times", s.Name, s.RestartCount)
		}
	}
	if p.Status.Phase != corev1.PodRunning || h.runningIDs("debugged")["main"] != mainID {
		t.Errorf("phase %s, main %s (was %s): want the pod running, main untouched", p.Status.Phase, h.runningIDs("debugged")["main"], mainID)
	}
}
