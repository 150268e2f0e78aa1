package agent

import (
	"context"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeagent/nodeagent/staging/mirror"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// A static pod is admitted by its OS and its node selector and required
// node affinity, as the kubelet admits it: against the node's own labels
// while the Node is not known (standalone, or the apiserver away), against
// the Node once it is. A pod they refuse is Failed with the kubelet's
// reason and never synced; one they match runs.
func TestStaticPodsAreAdmittedByNodeSelectorAndOS(t *testing.T) {
	static := func(name string, edit func(*corev1.Pod)) *corev1.Pod {
		p := staticPod(name, "busybox", corev1.RestartPolicyAlways)
		edit(p)
		return p
	}
	selector := func(kv ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{}
			for i := 0; i < len(kv); i += 2 {
				p.Spec.NodeSelector[kv[i]] = kv[i+1]
			}
		}
	}
	cases := []struct {
		reason string // "" runs
		pod    *corev1.Pod
	}{
		{"", static("own-label", selector("pool", "infra"))},
		{"NodeAffinity", static("other-label", selector("pool", "gpu"))},
		{"PodOSNotSupported", static("other-os", func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: "windows"} })},
		{"", static("own-os", func(p *corev1.Pod) { p.Labels = map[string]string{corev1.LabelOSStable: runtime.GOOS} })},
	}

	t.Run("without a Node", func(t *testing.T) {
		e := newTestEnv(t)
		e.ready.Store(true)
		e.start()
		for _, tc := range cases {
			checkStaticAdmission(e, tc.pod, tc.reason)
		}
	})

	t.Run("with a Node, its labels", func(t *testing.T) {
		e := newTestEnv(t)
		e.ready.Store(true)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"pool": "gpu"}}}
		var getter mirror.NodeGetter = mirror.NodeGetterFunc(func(context.Context) (*corev1.Node, error) { return node, nil })
		e.beforeRun = func(a *Agent) { a.Connected(getter) }
		e.start()
		// The Node's labels, not the ones the agent registered it with.
		checkStaticAdmission(e, static("gpu", selector("pool", "gpu")), "")
		checkStaticAdmission(e, static("infra", selector("pool", "infra")), "NodeAffinity")
	})
}

func checkStaticAdmission(e *testEnv, pod *corev1.Pod, reason string) {
	e.t.Helper()
	e.send(podtypes.ADD, pod)
	if reason == "" {
		e.eventually(pod.Name+" runs", func() bool { return e.phase(pod.UID) == corev1.PodRunning })
		return
	}
	e.eventually(pod.Name+" is Failed", func() bool { return e.phase(pod.UID) == corev1.PodFailed })
	info, _ := e.agent.Pod(pod.UID)
	if info.Status.Reason != reason || info.Status.Message == "" {
		e.t.Errorf("%s: status %s %q, want %s with a message", pod.Name, info.Status.Reason, info.Status.Message, reason)
	}
	if n := len(e.rt.syncCalls(pod.UID)); n != 0 {
		e.t.Errorf("%s: a refused pod was synced %d times", pod.Name, n)
	}
}
