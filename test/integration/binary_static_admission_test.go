package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// A static pod is admitted by its node selector as the kubelet admits it,
// in standalone mode too: against the labels the node registers with
// (kubernetes.io/hostname, os, arch, --node-labels). One that does not
// match is Failed with NodeAffinity before anything of it is created;
// one that does runs.
func TestBinaryStaticPodNodeSelector(t *testing.T) {
	h := newAgent(t, "--node-labels=example.com/pool=infra")
	onNode := testPod("selects-node", shContainer("main", sleepForever))
	onNode.Spec.NodeSelector = map[string]string{corev1.LabelHostname: h.node, "example.com/pool": "infra"}
	h.writeManifest(onNode)
	elsewhere := testPod("selects-other", shContainer("main", sleepForever))
	elsewhere.Spec.NodeSelector = map[string]string{"example.com/pool": "gpu"}
	h.writeManifest(elsewhere)

	h.waitPod("selects-node", "running", 60*time.Second, runningContainer("main"))
	p := h.waitPod("selects-other", "Failed", 30*time.Second, func(p localapi.Pod) bool { return p.Phase == string(corev1.PodFailed) })
	if p.Reason != "NodeAffinity" || p.Message != "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" {
		t.Errorf("status: %s %q, want NodeAffinity with the kubelet's message", p.Reason, p.Message)
	}
	if n := len(h.sandboxes("selects-other")); n != 0 {
		t.Errorf("%d sandboxes of a refused pod", n)
	}
}
