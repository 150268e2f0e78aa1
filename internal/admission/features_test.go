package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func restartAllOnExit(p *corev1.Pod) {
	always := corev1.ContainerRestartPolicyAlways
	p.Spec.Containers[0].RestartPolicy = &always
	p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
		Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
}

// A pod that needs a node feature the Node does not declare is refused
// with the kubelet's reason; one whose Node declares it is admitted; a pod
// that needs none is admitted by a Node that declares nothing, whatever
// version the Node reports.
func TestAdmitAPIPodNeedsDeclaredFeatures(t *testing.T) {
	sysctls, err := NewSysctls(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	version := func(v string) func(*corev1.Node) {
		return func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = v }
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		node    *corev1.Node
		message string
	}{
		{"restart-all, nothing declared", apiPod("p", nil, restartAllOnExit), bigNode(version("v0.0.0-abc")),
			"Pod requires node features that are not available: RestartAllContainersOnContainerExits"},
		{"restart-all, version unparsed", apiPod("p", nil, restartAllOnExit), bigNode(version("nodeagent")),
			"Pod requires node features that are not available: RestartAllContainersOnContainerExits"},
		{"restart-all, declared", apiPod("p", nil, restartAllOnExit), bigNode(version("v1.37.2"), func(n *corev1.Node) {
			n.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"}
		}), ""},
		{"plain pod, nothing declared", apiPod("p", nil), bigNode(version("v0.0.0-abc")), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := AdmitAPIPod(tc.pod, tc.node, nil, sysctls, NewHostPorts())
			want := Result{}
			if tc.message != "" {
				want = Result{ReasonFeatureUnsupported, tc.message}
			}
			if res != want {
				t.Errorf("got %+v, want %+v", res, want)
			}
		})
	}
}
