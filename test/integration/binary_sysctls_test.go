package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// Sysctls are admitted as the kubelet admits them, for static pods and
// pods from the apiserver alike: the safe ones and those of
// --allowed-unsafe-sysctls reach the pod's namespaces; any other refuses
// the pod, Failed with reason SysctlForbidden, before anything of it is
// created. The upstream conformance test ("should not launch unsafe, but
// not explicitly enabled sysctls on the node") uses kernel.msgmax.
func TestBinarySysctls(t *testing.T) {
	h := newConnectedAgent(t, "--allowed-unsafe-sysctls=kernel.sem")
	waitNode(t, "Ready", 30*time.Second, isReady)

	withSysctls := func(pod *corev1.Pod, kv ...string) *corev1.Pod {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for i := 0; i < len(kv); i += 2 {
			pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: kv[i], Value: kv[i+1]})
		}
		return pod
	}

	t.Run("a static pod with safe and allowed sysctls runs with them set", func(t *testing.T) {
		// The test pods share the host's network, so no net.* sysctl;
		// their IPC namespace is their own.
		h.writeManifest(withSysctls(testPod("sysctl-ok", shContainer("main", sleepForever)),
			"kernel.shm_rmid_forced", "1", "kernel.sem", "250 32000 32 200"))
		h.waitPod("sysctl-ok", "running", 60*time.Second, runningContainer("main"))
		got := strings.Fields(h.exec("sysctl-ok", "main", "cat", "/proc/sys/kernel/shm_rmid_forced", "/proc/sys/kernel/sem"))
		if strings.Join(got, " ") != "1 250 32000 32 200" {
			t.Errorf("the pod's kernel.shm_rmid_forced and kernel.sem are %q", got)
		}
	})

	t.Run("a static pod with an unsafe sysctl is refused", func(t *testing.T) {
		h.writeManifest(withSysctls(testPod("sysctl-unsafe", shContainer("main", sleepForever)), "kernel.msgmax", "10000000000"))
		p := h.waitPod("sysctl-unsafe", "Failed", 30*time.Second, func(p localapi.Pod) bool { return p.Phase == string(corev1.PodFailed) })
		if p.Reason != "SysctlForbidden" || p.Message != `forbidden sysctl: "kernel.msgmax" not allowlisted` {
			t.Errorf("status: %s %q, want SysctlForbidden naming kernel.msgmax", p.Reason, p.Message)
		}
		// Its mirror pod says the same.
		mirror := h.waitAPIPod(h.podName("sysctl-unsafe"), "Failed", 30*time.Second, func(p *corev1.Pod) bool {
			return p != nil && p.Status.Phase == corev1.PodFailed
		})
		if mirror.Status.Reason != "SysctlForbidden" {
			t.Errorf("mirror pod status: %s %q", mirror.Status.Reason, mirror.Status.Message)
		}
		// Nor does housekeeping start it later (--housekeeping-interval 2s).
		time.Sleep(3 * time.Second)
		if n := len(h.sandboxes("sysctl-unsafe")); n != 0 {
			t.Errorf("the refused pod has %d sandboxes", n)
		}
		if p := h.waitPod("sysctl-unsafe", "still Failed", time.Second, func(localapi.Pod) bool { return true }); p.Phase != string(corev1.PodFailed) {
			t.Errorf("phase %s after a while, want Failed", p.Phase)
		}
	})

	t.Run("a pod from the apiserver with an unsafe sysctl fails", func(t *testing.T) {
		created := h.createAPIPod(withSysctls(h.apiPodSpec("api-sysctl", shContainer("main", sleepForever)), "kernel.msgmax", "10000000000"))
		p := h.waitAPIPod(created.Name, "Failed", 30*time.Second, func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodFailed })
		if p.Status.Reason != "SysctlForbidden" || !strings.Contains(p.Status.Message, `"kernel.msgmax"`) {
			t.Errorf("status: %s %q, want SysctlForbidden naming kernel.msgmax", p.Status.Reason, p.Status.Message)
		}
		if n := len(h.sandboxes("api-sysctl")); n != 0 {
			t.Errorf("the refused pod has %d sandboxes", n)
		}
		eventuallyTrue(t, "a SysctlForbidden event", 10*time.Second, func() (bool, string) {
			evs, err := env.AdminClient.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{
				FieldSelector: fields.Set{"involvedObject.uid": string(created.UID), "reason": "SysctlForbidden"}.String()})
			if err != nil || len(evs.Items) == 0 {
				return false, "no event"
			}
			return strings.Contains(evs.Items[0].Message, "kernel.msgmax"), evs.Items[0].Message
		})
	})
}
