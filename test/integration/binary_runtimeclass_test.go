package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// createRuntimeClass creates a RuntimeClass as the admin, deleted when
// the test ends.
func createRuntimeClass(t *testing.T, name, handler string, overhead corev1.ResourceList) {
	t.Helper()
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
	if overhead != nil {
		rc.Overhead = &nodev1.Overhead{PodFixed: overhead}
	}
	if _, err := env.AdminClient.NodeV1().RuntimeClasses().Create(context.Background(), rc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating RuntimeClass %s: %v", name, err)
	}
	t.Cleanup(func() { deleteRuntimeClass(t, name) })
}

func deleteRuntimeClass(t *testing.T, name string) {
	err := env.AdminClient.NodeV1().RuntimeClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting RuntimeClass %s: %v", name, err)
	}
}

// sandboxEvent waits for a FailedCreatePodSandBox event of the pod whose
// message contains want.
func sandboxEvent(t *testing.T, pod *corev1.Pod, want string) {
	t.Helper()
	eventuallyTrue(t, "a FailedCreatePodSandBox event saying "+want, 30*time.Second, func() (bool, string) {
		evs, err := env.AdminClient.CoreV1().Events(pod.Namespace).List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.uid": string(pod.UID), "reason": "FailedCreatePodSandBox"}.String()})
		if err != nil || len(evs.Items) == 0 {
			return false, "no event"
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, want) {
				return true, ev.Message
			}
		}
		return false, evs.Items[0].Message
	})
}

// A pod's RuntimeClass, read under the node's own identity, gives its
// sandbox's handler; a class that does not exist, or whose handler the
// runtime lacks, creates no sandbox and leaves the pod Pending, retried,
// with the kubelet's FailedCreatePodSandBox event, never run with the
// default handler.
func TestBinaryRuntimeClass(t *testing.T) {
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	suffix := randomSuffix()

	t.Run("the class's handler runs the sandbox, and its overhead is the pod's", func(t *testing.T) {
		class := "runc-" + suffix
		createRuntimeClass(t, class, "runc", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("1Mi")})
		pod := h.apiPodSpec("rc-runc", shContainer("main", sleepForever))
		pod.Spec.RuntimeClassName = ptr.To(class)
		created := h.createAPIPod(pod)
		if cpu := created.Spec.Overhead[corev1.ResourceCPU]; cpu.String() != "10m" {
			t.Errorf("spec.overhead = %v: the apiserver's RuntimeClass admission did not set it", created.Spec.Overhead)
		}
		h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(created.UID))
		sbs := h.sandboxes("rc-runc")
		if len(sbs) != 1 || sbs[0].RuntimeHandler != "runc" {
			t.Errorf("sandboxes %v, want one run with handler runc", sbs)
		}
	})

	t.Run("a handler the runtime lacks", func(t *testing.T) {
		class, handler := "lacking-"+suffix, "no-such-handler-"+suffix
		createRuntimeClass(t, class, handler, nil)
		pod := h.apiPodSpec("rc-lacking", shContainer("main", sleepForever))
		pod.Spec.RuntimeClassName = ptr.To(class)
		created := h.createAPIPod(pod)
		sandboxEvent(t, created, handler) // containerd's "no runtime for ... is configured"
		time.Sleep(2 * time.Second)
		p := h.waitAPIPod(pod.Name, "Pending", time.Second, func(p *corev1.Pod) bool { return p != nil })
		if p.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s, want Pending", p.Status.Phase)
		}
		if n := len(h.sandboxes("rc-lacking")); n != 0 {
			t.Errorf("%d sandboxes, want none (no fallback to the default handler)", n)
		}
	})

	t.Run("a class that does not exist, then does", func(t *testing.T) {
		// The apiserver refuses a pod naming a missing class, so the class
		// goes after the pod is made, while the agent is away.
		class := "late-" + suffix
		h.stop()
		createRuntimeClass(t, class, "runc", nil)
		pod := h.apiPodSpec("rc-late", shContainer("main", sleepForever))
		pod.Spec.RuntimeClassName = ptr.To(class)
		created := h.createAPIPod(pod)
		deleteRuntimeClass(t, class)
		h.start()
		sandboxEvent(t, created, `runtimeclass.node.k8s.io "`+class+`" not found`)
		if p := h.waitAPIPod(pod.Name, "seen", time.Second, func(p *corev1.Pod) bool { return p != nil }); p.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s, want Pending", p.Status.Phase)
		}
		if n := len(h.sandboxes("rc-late")); n != 0 {
			t.Errorf("%d sandboxes, want none (no fallback to the default handler)", n)
		}
		createRuntimeClass(t, class, "runc", nil)
		h.waitAPIPod(pod.Name, "Running once its class exists", 90*time.Second, apiPodRunning(created.UID))
	})
}

// Standalone, nothing can resolve a RuntimeClass: a static pod naming one
// is refused out loud, not run with the default handler.
func TestBinaryRuntimeClassStandalone(t *testing.T) {
	h := newAgent(t)
	pod := testPod("rc-static", shContainer("main", sleepForever))
	pod.Spec.RuntimeClassName = ptr.To("gvisor")
	h.writeManifest(pod)
	p := h.waitPod("rc-static", "refused", 30*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && c.Reason == "CreatePodSandboxError" && strings.Contains(c.Message, "standalone")
	})
	if p.Phase != string(corev1.PodPending) {
		t.Errorf("phase %s, want Pending", p.Phase)
	}
	if n := len(h.sandboxes("rc-static")); n != 0 {
		t.Errorf("%d sandboxes, want none", n)
	}
}
