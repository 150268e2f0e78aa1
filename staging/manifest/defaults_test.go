package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func TestSetPodDefaults(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		HostNetwork:       true,
		PriorityClassName: "system-node-critical",
		Containers: []corev1.Container{{
			Name: "c", Image: "registry:5000/etcd",
			Ports: []corev1.ContainerPort{{ContainerPort: 2379}},
			Env:   []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			}, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{}}},
		}},
		Volumes: []corev1.Volume{{Name: "scratch"}, {Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}}},
	}}
	setPodDefaults(pod)
	c := pod.Spec.Containers[0]
	got := map[string]any{
		"restartPolicy":   pod.Spec.RestartPolicy,
		"dnsPolicy":       pod.Spec.DNSPolicy,
		"schedulerName":   pod.Spec.SchedulerName,
		"grace":           *pod.Spec.TerminationGracePeriodSeconds,
		"securityContext": *pod.Spec.SecurityContext,
		"serviceLinks":    *pod.Spec.EnableServiceLinks,
		"priority":        *pod.Spec.Priority,
		"pullPolicy":      c.ImagePullPolicy,
		"messagePath":     c.TerminationMessagePath,
		"messagePolicy":   c.TerminationMessagePolicy,
		"port":            c.Ports[0],
		"fieldRefVersion": c.Env[0].ValueFrom.FieldRef.APIVersion,
		"requests":        c.Resources.Requests.Cpu().String() + "," + c.Resources.Requests.Memory().String(),
		"probe":           [4]int32{c.LivenessProbe.TimeoutSeconds, c.LivenessProbe.PeriodSeconds, c.LivenessProbe.SuccessThreshold, c.LivenessProbe.FailureThreshold},
		"probeHTTP":       *c.LivenessProbe.HTTPGet,
		"emptyDir":        pod.Spec.Volumes[0].EmptyDir != nil,
		"hostPathType":    *pod.Spec.Volumes[1].HostPath.Type,
	}
	want := map[string]any{
		"restartPolicy":   corev1.RestartPolicyAlways,
		"dnsPolicy":       corev1.DNSClusterFirst,
		"schedulerName":   "default-scheduler",
		"grace":           int64(30),
		"securityContext": corev1.PodSecurityContext{},
		"serviceLinks":    true,
		"priority":        int32(2000001000),
		"pullPolicy":      corev1.PullAlways,
		"messagePath":     "/dev/termination-log",
		"messagePolicy":   corev1.TerminationMessageReadFile,
		"port":            corev1.ContainerPort{ContainerPort: 2379, HostPort: 2379, Protocol: corev1.ProtocolTCP},
		"fieldRefVersion": "v1",
		"requests":        "100m,1Gi", // a stated request stays, a missing one takes the limit
		"probe":           [4]int32{1, 10, 1, 3},
		"probeHTTP":       corev1.HTTPGetAction{Path: "/", Scheme: corev1.URISchemeHTTP},
		"emptyDir":        true,
		"hostPathType":    corev1.HostPathUnset,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	tests := map[string]corev1.PullPolicy{
		"nginx":                       corev1.PullAlways,
		"nginx:latest":                corev1.PullAlways,
		"nginx:1.27":                  corev1.PullIfNotPresent,
		"localhost:5000/nginx":        corev1.PullAlways,
		"localhost:5000/nginx:1.27":   corev1.PullIfNotPresent,
		"localhost:5000/nginx:latest": corev1.PullAlways,
		"nginx@sha256:0123abcd":       corev1.PullIfNotPresent,
		"nginx:latest@sha256:0123":    corev1.PullIfNotPresent,
	}
	for image, want := range tests {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

func TestSetPodDefaultsKeepsWhatIsSet(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, DNSPolicy: corev1.DNSDefault,
		TerminationGracePeriodSeconds: new(int64(5)), Priority: new(int32(7)), PriorityClassName: "system-node-critical",
		Containers: []corev1.Container{{Name: "c", Image: "x", ImagePullPolicy: corev1.PullNever,
			Ports: []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolUDP}}}},
	}}
	setPodDefaults(pod)
	got := []any{pod.Spec.RestartPolicy, pod.Spec.DNSPolicy, *pod.Spec.TerminationGracePeriodSeconds, *pod.Spec.Priority,
		pod.Spec.Containers[0].ImagePullPolicy, pod.Spec.Containers[0].Ports[0]}
	want := []any{corev1.RestartPolicyNever, corev1.DNSDefault, int64(5), int32(7), corev1.PullNever,
		corev1.ContainerPort{ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The deprecated serviceAccount fills serviceAccountName, as the
// apiserver does; a set serviceAccountName wins.
func TestDefaultServiceAccountAlias(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"  serviceAccount: legacy\n", "legacy"},
		{"  serviceAccount: legacy\n  serviceAccountName: app\n", "app"},
	} {
		pods, err := ParseManifest([]byte(podWithSpec(tc.spec+"  containers:\n  - {name: main, image: i}\n")), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/a.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		if got := pods[0].Spec.ServiceAccountName; got != tc.want {
			t.Errorf("%q: serviceAccountName %q, want %q", tc.spec, got, tc.want)
		}
	}
}
