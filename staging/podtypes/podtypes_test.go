package podtypes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podWith(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: annotations}}
}

func TestPodSourceAndIsStaticPod(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		wantSource  Source
		wantErr     string
		wantStatic  bool
	}{
		{name: "file", annotations: map[string]string{ConfigSourceAnnotationKey: "file"}, wantSource: FileSource, wantStatic: true},
		{name: "http", annotations: map[string]string{ConfigSourceAnnotationKey: "http"}, wantSource: HTTPSource, wantStatic: true},
		{name: "api", annotations: map[string]string{ConfigSourceAnnotationKey: "api"}, wantSource: APIServerSource},
		{name: "missing", annotations: nil, wantErr: "is missing"},
		{name: "all is not a pod source", annotations: map[string]string{ConfigSourceAnnotationKey: "*"}, wantErr: "names no known source"},
		{name: "unknown", annotations: map[string]string{ConfigSourceAnnotationKey: "ftp"}, wantErr: `"ftp" names no known source`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podWith(tt.annotations)
			got, err := PodSource(pod)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "web_default") {
					t.Fatalf("PodSource() error = %v, want one naming the pod and containing %q", err, tt.wantErr)
				}
			} else if err != nil || got != tt.wantSource {
				t.Fatalf("PodSource() = %q, %v; want %q", got, err, tt.wantSource)
			}
			if s := IsStaticPod(pod); s != tt.wantStatic {
				t.Errorf("IsStaticPod() = %v, want %v", s, tt.wantStatic)
			}
		})
	}
}

func TestMirrorAnnotations(t *testing.T) {
	static := podWith(map[string]string{ConfigSourceAnnotationKey: "file", ConfigHashAnnotationKey: "abc"})
	mirror := podWith(map[string]string{ConfigSourceAnnotationKey: "api", ConfigMirrorAnnotationKey: "abc"})
	emptyMirror := podWith(map[string]string{ConfigMirrorAnnotationKey: ""})

	if IsMirrorPod(static) || !IsMirrorPod(mirror) || !IsMirrorPod(emptyMirror) {
		t.Fatalf("IsMirrorPod: static=%v mirror=%v emptyMirror=%v; want false true true",
			IsMirrorPod(static), IsMirrorPod(mirror), IsMirrorPod(emptyMirror))
	}
	if got := ConfigHash(static); got != "abc" {
		t.Errorf("ConfigHash(static) = %q, want abc", got)
	}
	if got := ConfigHash(mirror); got != "" {
		t.Errorf("ConfigHash(mirror) = %q, want empty", got)
	}
	if h, ok := MirrorHash(mirror); !ok || h != "abc" {
		t.Errorf("MirrorHash(mirror) = %q, %v; want abc, true", h, ok)
	}
	if _, ok := MirrorHash(static); ok {
		t.Errorf("MirrorHash(static) reported a mirror")
	}
}

func TestFullNameRoundTrip(t *testing.T) {
	full := FullName("etcd-node1", "kube-system")
	if full != "etcd-node1_kube-system" {
		t.Fatalf("FullName = %q", full)
	}
	name, ns, err := ParseFullName(full)
	if err != nil || name != "etcd-node1" || ns != "kube-system" {
		t.Fatalf("ParseFullName(%q) = %q, %q, %v", full, name, ns, err)
	}
	if got := PodFullName(podWith(nil)); got != "web_default" {
		t.Errorf("PodFullName = %q", got)
	}
}

func TestParseFullNameRejectsMalformed(t *testing.T) {
	tests := map[string]string{
		"":            "exactly one",
		"web":         "found 0",
		"a_b_c":       "found 2",
		"_default":    "name is empty",
		"web_":        "namespace is empty",
		"_":           "name is empty",
		"web__system": "found 2",
	}
	for in, want := range tests {
		_, _, err := ParseFullName(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+in+`"`) {
			t.Errorf("ParseFullName(%q) error = %v; want one quoting the input and containing %q", in, err, want)
		}
	}
}

func TestOpString(t *testing.T) {
	want := map[Op]string{SET: "SET", ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", REMOVE: "REMOVE", RECONCILE: "RECONCILE", Op(42): "Op(42)", Op(-1): "Op(-1)"}
	for op, s := range want {
		if op.String() != s {
			t.Errorf("Op(%d).String() = %q, want %q", int(op), op.String(), s)
		}
	}
}

func TestSources(t *testing.T) {
	for _, s := range Sources() {
		if !s.Valid() {
			t.Errorf("Sources() lists invalid %q", s)
		}
	}
	if AllSource.Valid() || Source("").Valid() {
		t.Errorf("AllSource and the empty source must not be valid pod sources")
	}
}

func TestGracePeriod(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name           string
		deletion, spec *int64
		want           int64
	}{
		{"nothing set: the API default", nil, nil, 30},
		{"the spec's", nil, i(5), 5},
		{"the deletion's wins over the spec's", i(2), i(5), 2},
		{"zero is zero", i(0), i(5), 0},
		{"negative is zero", nil, i(-3), 0},
	} {
		pod := &corev1.Pod{}
		pod.DeletionGracePeriodSeconds, pod.Spec.TerminationGracePeriodSeconds = tc.deletion, tc.spec
		if got := GracePeriod(pod); got != tc.want {
			t.Errorf("%s: GracePeriod = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestIsSidecar(t *testing.T) {
	always, onFailure := corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicy("OnFailure")
	for _, tc := range []struct {
		policy *corev1.ContainerRestartPolicy
		want   bool
	}{{nil, false}, {&always, true}, {&onFailure, false}} {
		if got := IsSidecar(&corev1.Container{Name: "c", RestartPolicy: tc.policy}); got != tc.want {
			t.Errorf("IsSidecar(restartPolicy %v) = %v, want %v", tc.policy, got, tc.want)
		}
	}
}

func TestContainers(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers:      []corev1.Container{{Name: "init"}},
		Containers:          []corev1.Container{{Name: "app"}, {Name: "app2"}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}, TargetContainerName: "app"}},
	}
	var names []string
	for _, c := range Containers(spec) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "init,app,app2,debug" {
		t.Errorf("Containers = %s, want init,app,app2,debug", got)
	}
	// The ephemeral container is the spec's own, not a copy.
	Containers(spec)[3].Image = "changed"
	if spec.EphemeralContainers[0].Image != "changed" {
		t.Error("Containers returned a copy of the ephemeral container")
	}
}
