package admission

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

const nodeName = "n1"

// list builds a ResourceList from name=quantity pairs.
func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func testNode(allocatable corev1.ResourceList, edit ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
			corev1.LabelHostname: nodeName, corev1.LabelOSStable: runtime.GOOS, "zone": "a",
		}},
		Status: corev1.NodeStatus{Allocatable: allocatable},
	}
	for _, e := range edit {
		e(n)
	}
	return n
}

// bigNode fits every pod of these tests on resources.
func bigNode(edit ...func(*corev1.Node)) *corev1.Node {
	return testNode(list("cpu", "8", "memory", "16Gi", "ephemeral-storage", "100Gi", "pods", "110"), edit...)
}

// apiPod is a pod from the apiserver, bound to the node, with one
// container requesting the given resources.
func apiPod(name string, requests corev1.ResourceList, edit ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			Annotations: map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.APIServerSource)},
		},
		Spec: corev1.PodSpec{
			NodeName:   nodeName,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}},
		},
	}
	for _, e := range edit {
		e(p)
	}
	return p
}

func static(p *corev1.Pod) {
	p.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
}

func mirror(p *corev1.Pod) {
	p.Annotations[podtypes.ConfigMirrorAnnotationKey] = "hash"
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func priority(v int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Priority = &v }
}

func nodeSelector(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func requiredAffinity(key string, op corev1.NodeSelectorOperator, values ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}},
			}}},
		}}
	}
}

func taint(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "db", Effect: effect})
	}
}

func tolerate(tol corev1.Toleration) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, tol) }
}

func initContainer(requests corev1.ResourceList, sidecar bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: fmt.Sprintf("init%d", len(p.Spec.InitContainers)), Resources: corev1.ResourceRequirements{Requests: requests}}
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}

func otherOS() corev1.OSName {
	if runtime.GOOS == "windows" {
		return corev1.Linux
	}
	return corev1.Windows
}

// pods makes n admitted API pods each requesting req.
func pods(n int, req corev1.ResourceList, edit ...func(*corev1.Pod)) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = apiPod(fmt.Sprintf("other%d", i), req, edit...)
	}
	return out
}

func TestAdmit(t *testing.T) {
	strict := corev1.SupplementalGroupsPolicyStrict
	strictGroups := func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroupsPolicy: &strict}
	}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		node     *corev1.Node
		admitted []*corev1.Pod
		// wantReason "" means admitted; wantMessage "" skips the message.
		wantReason, wantMessage string
	}{
		{
			name:     "a pod that fits is admitted",
			pod:      apiPod("p", list("cpu", "500m", "memory", "1Gi")),
			node:     testNode(list("cpu", "1", "memory", "2Gi", "pods", "10")),
			admitted: pods(1, list("cpu", "500m", "memory", "1Gi")),
		},
		{
			name:       "no node",
			pod:        apiPod("p", nil),
			wantReason: "InvalidNodeInfo",
		},
		{
			name: "resource claims: no DRA here",
			pod: apiPod("p", nil, func(p *corev1.Pod) {
				p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new("gpu-claim")}}
			}),
			node:        bigNode(),
			wantReason:  "UnsupportedResourceClaims",
			wantMessage: "Failed to admit pod: it has resourceClaims, and this node runs no dynamic resource allocation (DRA) driver to prepare them",
		},

		// The OS.
		{
			name:        "an os label other than the node's OS",
			pod:         apiPod("p", nil, func(p *corev1.Pod) { p.Labels = map[string]string{corev1.LabelOSStable: string(otherOS())} }),
			node:        bigNode(),
			wantReason:  "PodOSSelectorNodeLabelDoesNotMatch",
			wantMessage: fmt.Sprintf("Failed to admit pod as the `kubernetes.io/os` label %q doesn't match the node's OS %q", otherOS(), runtime.GOOS),
		},
		{
			name: "an os label is held against the agent's OS, not the node's label",
			pod:  apiPod("p", nil, func(p *corev1.Pod) { p.Labels = map[string]string{corev1.LabelOSStable: runtime.GOOS} }),
			node: bigNode(func(n *corev1.Node) { n.Labels[corev1.LabelOSStable] = string(otherOS()) }),
		},
		{
			name:        "spec.os other than the node's OS",
			pod:         apiPod("p", nil, func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: otherOS()} }),
			node:        bigNode(),
			wantReason:  "PodOSNotSupported",
			wantMessage: fmt.Sprintf("Failed to admit pod as the OS field %q doesn't match the node's OS %q", otherOS(), runtime.GOOS),
		},
		{
			name: "spec.os the node's OS",
			pod:  apiPod("p", nil, func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.OSName(runtime.GOOS)} }),
			node: bigNode(),
		},
		{
			name:       "the OS is checked before resources",
			pod:        apiPod("p", list("cpu", "100"), func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: otherOS()} }),
			node:       bigNode(),
			wantReason: "PodOSNotSupported",
		},
		{
			name:       "a static pod is refused for its OS too",
			pod:        apiPod("p", nil, static, func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: otherOS()} }),
			node:       bigNode(),
			wantReason: "PodOSNotSupported",
		},

		// Supplemental groups.
		{
			name:        "Strict supplemental groups on a node that does not declare them",
			pod:         apiPod("p", nil, strictGroups),
			node:        bigNode(),
			wantReason:  "SupplementalGroupsPolicyNotSupported",
			wantMessage: "SupplementalGroupsPolicy=Strict is not supported in this node",
		},
		{
			name: "Strict supplemental groups on a node that declares them",
			pod:  apiPod("p", nil, strictGroups),
			node: bigNode(func(n *corev1.Node) {
				yes := true
				n.Status.Features = &corev1.NodeFeatures{SupplementalGroupsPolicy: &yes}
			}),
		},

		// Resources.
		{
			name:        "cpu short, in millicores, against allocatable less the admitted pods",
			pod:         apiPod("p", list("cpu", "2")),
			node:        testNode(list("cpu", "1", "memory", "1Gi", "pods", "10")),
			admitted:    pods(1, list("cpu", "500m")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 2000, used: 500, capacity: 1000",
		},
		{
			name:        "cpu that fits alone but not beside the admitted pods",
			pod:         apiPod("p", list("cpu", "601m")),
			node:        testNode(list("cpu", "1", "pods", "10")),
			admitted:    pods(2, list("cpu", "200m")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 601, used: 400, capacity: 1000",
		},
		{
			name:     "cpu that exactly fills the node fits",
			pod:      apiPod("p", list("cpu", "600m")),
			node:     testNode(list("cpu", "1", "pods", "10")),
			admitted: pods(2, list("cpu", "200m")),
		},
		{
			name:        "memory short, in bytes",
			pod:         apiPod("p", list("memory", "1Gi")),
			node:        testNode(list("cpu", "1", "memory", "1536Mi", "pods", "10")),
			admitted:    pods(1, list("memory", "1Gi")),
			wantReason:  "OutOfmemory",
			wantMessage: "Node didn't have enough resource: memory, requested: 1073741824, used: 1073741824, capacity: 1610612736",
		},
		{
			name:        "ephemeral storage short",
			pod:         apiPod("p", list("ephemeral-storage", "2Gi")),
			node:        testNode(list("ephemeral-storage", "1Gi", "pods", "10")),
			wantReason:  "OutOfephemeral-storage",
			wantMessage: "Node didn't have enough resource: ephemeral-storage, requested: 2147483648, used: 0, capacity: 1073741824",
		},
		{
			name:        "pods: the node's pod count is full",
			pod:         apiPod("p", nil),
			node:        testNode(list("cpu", "1", "pods", "2")),
			admitted:    pods(2, nil),
			wantReason:  "OutOfpods",
			wantMessage: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
		},
		{
			name:       "the pod count is checked before cpu",
			pod:        apiPod("p", list("cpu", "4")),
			node:       testNode(list("cpu", "1", "pods", "1")),
			admitted:   pods(1, nil),
			wantReason: "OutOfpods",
		},
		{
			name:       "cpu is checked before memory",
			pod:        apiPod("p", list("cpu", "4", "memory", "4Gi")),
			node:       testNode(list("cpu", "1", "memory", "1Gi", "pods", "10")),
			wantReason: "OutOfcpu",
		},
		{
			name:        "a node without allocatable entries takes no pod",
			pod:         apiPod("p", nil),
			node:        testNode(nil),
			wantReason:  "OutOfpods",
			wantMessage: "Node didn't have enough resource: pods, requested: 1, used: 0, capacity: 0",
		},
		{
			name:        "a node without a cpu entry has none to give",
			pod:         apiPod("p", list("cpu", "1m")),
			node:        testNode(list("pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 1, used: 0, capacity: 0",
		},
		{
			name: "a pod without requests fits a node without a cpu entry",
			pod:  apiPod("p", nil),
			node: testNode(list("pods", "10")),
		},
		{
			name:     "a pod without requests fits a node already overcommitted",
			pod:      apiPod("p", nil),
			node:     testNode(list("cpu", "1", "memory", "1Gi", "pods", "10")),
			admitted: pods(2, list("cpu", "1", "memory", "1Gi")),
		},
		{
			name:        "an init container's request above the app containers' counts alone",
			pod:         apiPod("p", list("cpu", "1"), initContainer(list("cpu", "3"), false)),
			node:        testNode(list("cpu", "2", "pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
		},
		{
			name: "init containers run one at a time: their requests are not summed",
			pod:  apiPod("p", list("cpu", "1"), initContainer(list("cpu", "2"), false), initContainer(list("cpu", "2"), false)),
			node: testNode(list("cpu", "2", "pods", "10")),
		},
		{
			name:        "a sidecar's request adds to the app containers'",
			pod:         apiPod("p", list("cpu", "1"), initContainer(list("cpu", "1"), true)),
			node:        testNode(list("cpu", "1500m", "pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1500",
		},
		{
			name:        "an init container after a sidecar runs beside it",
			pod:         apiPod("p", list("cpu", "100m"), initContainer(list("cpu", "1"), true), initContainer(list("cpu", "1"), false)),
			node:        testNode(list("cpu", "1500m", "pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1500",
		},
		{
			name:        "admitted pods count their sidecars too",
			pod:         apiPod("p", list("cpu", "1")),
			node:        testNode(list("cpu", "2", "pods", "10")),
			admitted:    pods(1, list("cpu", "500m"), initContainer(list("cpu", "1"), true)),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
		},
		{
			name: "pod overhead adds to the request",
			pod: apiPod("p", list("cpu", "1", "memory", "100Mi"), func(p *corev1.Pod) {
				p.Spec.Overhead = list("cpu", "250m", "memory", "64Mi")
			}),
			node:        testNode(list("cpu", "1200m", "memory", "1Gi", "pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 1250, used: 0, capacity: 1200",
		},
		{
			name: "the admitted pods' overhead is used",
			pod:  apiPod("p", list("cpu", "500m")),
			node: testNode(list("cpu", "1", "pods", "10")),
			admitted: pods(1, list("cpu", "250m"), func(p *corev1.Pod) {
				p.Spec.Overhead = list("cpu", "300m")
			}),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 500, used: 550, capacity: 1000",
		},
		{
			name: "pod-level requests replace the containers' sum",
			pod: apiPod("p", list("cpu", "100m"), func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: list("cpu", "2")}
			}),
			node:        testNode(list("cpu", "1", "pods", "10")),
			wantReason:  "OutOfcpu",
			wantMessage: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000",
		},
		{
			// The status a kubelet wrote is not read: the spec the caller
			// gives (as allocated) is what counts.
			name: "an admitted pod holds what its spec asks, whatever its status says",
			pod:  apiPod("p", list("cpu", "800m")),
			node: testNode(list("cpu", "1", "pods", "10")),
			admitted: pods(1, list("cpu", "200m"), func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: list("cpu", "700m")}}
			}),
		},
		{
			name: "terminated pods hold nothing",
			pod:  apiPod("p", list("cpu", "1", "memory", "1Gi")),
			node: testNode(list("cpu", "1", "memory", "1Gi", "pods", "1")),
			admitted: append(pods(1, list("cpu", "1", "memory", "1Gi"), phase(corev1.PodSucceeded)),
				apiPod("failed", list("cpu", "1", "memory", "1Gi"), phase(corev1.PodFailed))),
		},
		{
			name:     "running and pending pods hold their requests",
			pod:      apiPod("p", list("cpu", "1")),
			node:     testNode(list("cpu", "2", "pods", "10")),
			admitted: append(pods(1, list("cpu", "600m"), phase(corev1.PodRunning)), apiPod("pending", list("cpu", "600m"), phase(corev1.PodPending))),
			// 1000 > 2000 - 1200
			wantReason: "OutOfcpu",
		},
		{
			name:     "the pod itself among the admitted is not counted",
			pod:      apiPod("p", list("cpu", "1")),
			node:     testNode(list("cpu", "1", "pods", "1")),
			admitted: []*corev1.Pod{apiPod("p", list("cpu", "1"))},
		},
		{
			name:     "a mirror pod among the admitted is not counted",
			pod:      apiPod("p", list("cpu", "1")),
			node:     testNode(list("cpu", "1", "pods", "1")),
			admitted: pods(1, list("cpu", "1"), mirror),
		},
		{
			name:        "an extended resource short",
			pod:         apiPod("p", list("example.com/gpu", "2")),
			node:        testNode(list("cpu", "1", "pods", "10", "example.com/gpu", "2")),
			admitted:    pods(1, list("example.com/gpu", "1")),
			wantReason:  "OutOfexample.com/gpu",
			wantMessage: "Node didn't have enough resource: example.com/gpu, requested: 2, used: 1, capacity: 2",
		},
		{
			name:     "an extended resource that fits",
			pod:      apiPod("p", list("example.com/gpu", "1")),
			node:     testNode(list("cpu", "1", "pods", "10", "example.com/gpu", "2")),
			admitted: pods(1, list("example.com/gpu", "1")),
		},
		{
			name:        "an extended resource the node lists at zero",
			pod:         apiPod("p", list("example.com/gpu", "1")),
			node:        testNode(list("cpu", "1", "pods", "10", "example.com/gpu", "0")),
			wantReason:  "OutOfexample.com/gpu",
			wantMessage: "Node didn't have enough resource: example.com/gpu, requested: 1, used: 0, capacity: 0",
		},
		{
			name: "an extended resource the node does not list is not checked",
			pod:  apiPod("p", list("example.com/gpu", "4"), initContainer(list("example.com/fpga", "1"), false)),
			node: testNode(list("cpu", "1", "pods", "10")),
		},
		{
			name: "an extended resource of the overhead is checked even when the node does not list it",
			pod: apiPod("p", list("example.com/gpu", "4"), func(p *corev1.Pod) {
				p.Spec.Overhead = list("example.com/gpu", "1")
			}),
			node:        testNode(list("cpu", "1", "pods", "10")),
			wantReason:  "OutOfexample.com/gpu",
			wantMessage: "Node didn't have enough resource: example.com/gpu, requested: 1, used: 0, capacity: 0",
		},
		{
			name:        "hugepages the node does not list are checked (they are not extended)",
			pod:         apiPod("p", list("hugepages-2Mi", "4Mi", "memory", "4Mi")),
			node:        testNode(list("cpu", "1", "memory", "1Gi", "pods", "10")),
			wantReason:  "OutOfhugepages-2Mi",
			wantMessage: "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0",
		},
		{
			name:       "other resources are checked by name",
			pod:        apiPod("p", list("example.com/b", "1", "example.com/a", "1")),
			node:       testNode(list("pods", "10", "example.com/a", "0", "example.com/b", "0")),
			wantReason: "OutOfexample.com/a",
		},
		{
			name:       "resources are checked before node affinity",
			pod:        apiPod("p", list("cpu", "4"), nodeSelector("zone", "b")),
			node:       testNode(list("cpu", "1", "pods", "10")),
			wantReason: "OutOfcpu",
		},

		// Critical pods.
		{
			name:     "a static pod short of cpu is admitted (critical; nodeagent does not preempt)",
			pod:      apiPod("p", list("cpu", "4"), static),
			node:     testNode(list("cpu", "1", "pods", "10")),
			admitted: pods(1, list("cpu", "1")),
		},
		{
			name:     "a static pod on a full node is admitted",
			pod:      apiPod("p", nil, static),
			node:     testNode(list("cpu", "1", "pods", "1")),
			admitted: pods(1, nil),
		},
		{
			name: "a static pod on a node without allocatable entries is admitted",
			pod:  apiPod("p", list("cpu", "1"), static),
			node: testNode(nil),
		},
		{
			name:     "a pod of system-critical priority short of memory is admitted",
			pod:      apiPod("p", list("memory", "4Gi"), priority(systemCriticalPriority)),
			node:     testNode(list("memory", "1Gi", "pods", "10")),
			admitted: pods(1, list("memory", "1Gi")),
		},
		{
			name:       "a pod of high but not critical priority is refused",
			pod:        apiPod("p", list("memory", "4Gi"), priority(systemCriticalPriority-1)),
			node:       testNode(list("memory", "1Gi", "pods", "10")),
			wantReason: "OutOfmemory",
		},
		{
			name:        "a static pod short of cpu is still held to node affinity",
			pod:         apiPod("p", list("cpu", "4"), static, nodeSelector("zone", "b")),
			node:        testNode(list("cpu", "1", "pods", "10")),
			wantReason:  "NodeAffinity",
			wantMessage: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
		},

		// Node selector and required node affinity.
		{
			name:        "a node selector the node's labels do not match",
			pod:         apiPod("p", nil, nodeSelector("zone", "b")),
			node:        bigNode(),
			wantReason:  "NodeAffinity",
			wantMessage: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
		},
		{
			name: "a node selector the node's labels match",
			pod:  apiPod("p", nil, nodeSelector("zone", "a", corev1.LabelHostname, nodeName)),
			node: bigNode(),
		},
		{
			name:       "required node affinity the node does not match",
			pod:        apiPod("p", nil, requiredAffinity("zone", corev1.NodeSelectorOpIn, "b", "c")),
			node:       bigNode(),
			wantReason: "NodeAffinity",
		},
		{
			name: "required node affinity the node matches",
			pod:  apiPod("p", nil, requiredAffinity("zone", corev1.NodeSelectorOpNotIn, "b", "c")),
			node: bigNode(),
		},
		{
			name:       "required node affinity that does not parse matches nothing",
			pod:        apiPod("p", nil, requiredAffinity("zone", corev1.NodeSelectorOpGt, "x")),
			node:       bigNode(),
			wantReason: "NodeAffinity",
		},
		{
			name: "preferred node affinity never refuses",
			pod: apiPod("p", nil, func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}},
					}}},
				}}
			}),
			node: bigNode(),
		},

		// Node name.
		{
			name:        "a pod bound to another node",
			pod:         apiPod("p", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
			node:        bigNode(),
			wantReason:  "NodeName",
			wantMessage: "Predicate NodeName failed: node(s) didn't match the requested node name",
		},
		{
			name: "a pod bound to no node passes the name check",
			pod:  apiPod("p", nil, func(p *corev1.Pod) { p.Spec.NodeName = "" }),
			node: bigNode(),
		},
		{
			name:       "node affinity is checked before the node name",
			pod:        apiPod("p", nil, nodeSelector("zone", "b"), func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
			node:       bigNode(),
			wantReason: "NodeAffinity",
		},

		// Taints.
		{
			name:        "a NoExecute taint not tolerated",
			pod:         apiPod("p", nil),
			node:        bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason:  "TaintToleration",
			wantMessage: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
		},
		{
			name: "a NoExecute taint tolerated by key and value",
			pod: apiPod("p", nil, tolerate(corev1.Toleration{
				Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoExecute,
			})),
			node: bigNode(taint(corev1.TaintEffectNoExecute)),
		},
		{
			name: "a NoExecute taint tolerated by Exists on every key",
			pod:  apiPod("p", nil, tolerate(corev1.Toleration{Operator: corev1.TolerationOpExists})),
			node: bigNode(taint(corev1.TaintEffectNoExecute)),
		},
		{
			name:       "a toleration of another value does not tolerate",
			pod:        apiPod("p", nil, tolerate(corev1.Toleration{Key: "dedicated", Value: "web"})),
			node:       bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason: "TaintToleration",
		},
		{
			name:       "a toleration of another effect does not tolerate",
			pod:        apiPod("p", nil, tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})),
			node:       bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason: "TaintToleration",
		},
		{
			name:       "Gt tolerations match nothing (the comparison operators are alpha)",
			pod:        apiPod("p", nil, tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpGt, Value: "0"})),
			node:       bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason: "TaintToleration",
		},
		{
			name: "NoSchedule and PreferNoSchedule taints are the scheduler's, not admission's",
			pod:  apiPod("p", nil),
			node: bigNode(taint(corev1.TaintEffectNoSchedule), taint(corev1.TaintEffectPreferNoSchedule)),
		},
		{
			name: "a static pod is exempt from taints",
			pod:  apiPod("p", nil, static),
			node: bigNode(taint(corev1.TaintEffectNoExecute)),
		},
		{
			name:       "a critical pod from the apiserver is not exempt from taints",
			pod:        apiPod("p", nil, priority(systemCriticalPriority)),
			node:       bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason: "TaintToleration",
		},
		{
			name:       "the node name is checked before taints",
			pod:        apiPod("p", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
			node:       bigNode(taint(corev1.TaintEffectNoExecute)),
			wantReason: "NodeName",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Admit(tc.pod, tc.node, tc.admitted)
			if got.Reason != tc.wantReason {
				t.Fatalf("Admit() = %+v, want reason %q", got, tc.wantReason)
			}
			if tc.wantMessage != "" && got.Message != tc.wantMessage {
				t.Errorf("message = %q\n      want %q", got.Message, tc.wantMessage)
			}
			if got.Reason != "" && got.Message == "" {
				t.Errorf("reason %q comes without a message", got.Reason)
			}
			if got.Reason == "" && got.Message != "" {
				t.Errorf("admitted with a message: %q", got.Message)
			}
		})
	}
}

func TestAdmitLeavesItsArgumentsAlone(t *testing.T) {
	pod := apiPod("p", list("cpu", "1", "example.com/gpu", "1"), func(p *corev1.Pod) {
		p.Spec.Overhead = list("cpu", "100m")
	})
	node := testNode(list("cpu", "1", "pods", "10"))
	admitted := pods(3, list("cpu", "100m"))
	wantPod, wantNode := pod.DeepCopy(), node.DeepCopy()
	wantAdmitted := make([]*corev1.Pod, len(admitted))
	for i, p := range admitted {
		wantAdmitted[i] = p.DeepCopy()
	}
	if r := Admit(pod, node, admitted); r.Reason != "OutOfcpu" {
		t.Fatalf("Admit() = %+v, want OutOfcpu", r)
	}
	if !apiequal(pod, wantPod) || !apiequal(node, wantNode) {
		t.Fatal("Admit changed the pod or the node")
	}
	for i := range admitted {
		if !apiequal(admitted[i], wantAdmitted[i]) {
			t.Fatalf("Admit changed admitted pod %d", i)
		}
	}
}

func BenchmarkAdmit(b *testing.B) {
	node := testNode(list("cpu", "64", "memory", "256Gi", "ephemeral-storage", "1Ti", "pods", "111", "example.com/gpu", "8"))
	admitted := pods(110, list("cpu", "250m", "memory", "512Mi"), func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Resources: corev1.ResourceRequirements{Requests: list("cpu", "50m", "memory", "64Mi")}})
		p.Status.Phase = corev1.PodRunning
	})
	pod := apiPod("p", list("cpu", "1", "memory", "1Gi", "example.com/gpu", "1"), nodeSelector("zone", "a"),
		initContainer(list("cpu", "100m"), true))
	b.ReportAllocs()
	for b.Loop() {
		if r := Admit(pod, node, admitted); r.Reason != "" {
			b.Fatalf("Admit() = %+v", r)
		}
	}
}

// systemCriticalPriority is system-cluster-critical's priority, from which
// on a pod is critical (podtypes.IsCritical).
const systemCriticalPriority = 2_000_000_000
