package agent

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/internal/admission"
	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func withSysctls(pod *corev1.Pod, names ...string) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
	for _, n := range names {
		pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
	}
	return pod
}

// Every pod, static or from the apiserver, is refused for a sysctl that is
// neither safe nor allowed, as the kubelet refuses it: Failed, reason
// SysctlForbidden, never synced. Safe and allowed ones run.
func TestSysctlsAreAdmittedForEveryPod(t *testing.T) {
	e := newTestEnv(t)
	e.ready.Store(true)
	var err error
	if e.sysctls, err = admission.NewSysctls([]string{"kernel.sem"}, nil); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("10"),
	}}}
	var getter mirror.NodeGetter = mirror.NodeGetterFunc(func(context.Context) (*corev1.Node, error) { return node, nil })
	e.beforeRun = func(a *Agent) { a.Connected(getter) }
	e.start()

	static := func(name string) *corev1.Pod { return staticPod(name, "busybox", corev1.RestartPolicyAlways) }
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		message string // "" runs
	}{
		{name: "static, unsafe", pod: withSysctls(static("a"), "kernel.msgmax"), message: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "static, safe", pod: withSysctls(static("b"), "net.ipv4.ping_group_range")},
		{name: "static, allowed unsafe", pod: withSysctls(static("c"), "kernel.sem")},
		{name: "API, unsafe", pod: withSysctls(apiPod("a", "100m"), "kernel.shm_rmid_forced", "kernel.msgmax"), message: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "API, safe", pod: withSysctls(apiPod("b", "100m"), "kernel.shm_rmid_forced")},
		{name: "API, allowed unsafe", pod: withSysctls(apiPod("c", "100m"), "kernel.sem")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if podtypes.IsStaticPod(tc.pod) {
				e.send(podtypes.ADD, tc.pod)
			} else {
				e.updates <- podtypes.PodUpdate{Op: podtypes.ADD, Source: podtypes.APIServerSource, Pods: []*corev1.Pod{tc.pod}}
			}
			if tc.message == "" {
				e.eventually("the pod runs", func() bool { return e.phase(tc.pod.UID) == corev1.PodRunning })
				return
			}
			e.eventually("the pod is Failed", func() bool { return e.phase(tc.pod.UID) == corev1.PodFailed })
			info, _ := e.agent.Pod(tc.pod.UID)
			if info.Status.Reason != admission.ReasonSysctlForbidden || info.Status.Message != tc.message {
				t.Errorf("status = %s %q, want %s %q", info.Status.Reason, info.Status.Message, admission.ReasonSysctlForbidden, tc.message)
			}
			// Sent again, it still does not run.
			e.send(podtypes.UPDATE, tc.pod)
			time.Sleep(50 * time.Millisecond)
			if n := len(e.rt.syncCalls(tc.pod.UID)); n != 0 {
				t.Errorf("a refused pod was synced %d times", n)
			}
		})
	}
}
