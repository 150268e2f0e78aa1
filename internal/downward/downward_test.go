package downward

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "two\nlines \"quoted\""}},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: "sa",
			Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			}}, {Name: "bare"}}},
	}
}

func TestFieldValue(t *testing.T) {
	ips := IPs{Pod: []string{"10.0.0.5", "fd00::5"}, Host: []string{"192.168.1.2", "fd01::2"}}
	for path, want := range map[string]string{
		"metadata.name":                "web",
		"metadata.namespace":           "prod",
		"metadata.uid":                 "u-1",
		"metadata.labels":              "app=\"web\"\ntier=\"front\"",
		"metadata.annotations":         `note="two\nlines \"quoted\""`,
		"metadata.labels['app']":       "web",
		"metadata.labels['missing']":   "",
		"metadata.annotations['note']": "two\nlines \"quoted\"",
		"spec.nodeName":                "node-a",
		"spec.serviceAccountName":      "sa",
		"status.podIP":                 "10.0.0.5",
		"status.podIPs":                "10.0.0.5,fd00::5",
		"status.hostIP":                "192.168.1.2",
		"status.hostIPs":               "192.168.1.2,fd01::2",
	} {
		got, err := FieldValue(testPod(), path, ips)
		if err != nil || got != want {
			t.Errorf("FieldValue(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := FieldValue(testPod(), "spec.hostname", ips); !errors.Is(err, ErrUnsupported) {
		t.Errorf("spec.hostname: %v, want %v", err, ErrUnsupported)
	}
	if got, _ := FieldValue(testPod(), "status.hostIP", IPs{}); got != "" {
		t.Errorf("status.hostIP without host IPs = %q, want empty", got)
	}
}

func TestVolumeFieldValueOnlyMetadata(t *testing.T) {
	if got, err := VolumeFieldValue(testPod(), "metadata.labels"); err != nil || got != "app=\"web\"\ntier=\"front\"" {
		t.Errorf("metadata.labels = %q, %v", got, err)
	}
	for _, path := range []string{"spec.nodeName", "status.podIP", "metadata.generation"} {
		if _, err := VolumeFieldValue(testPod(), path); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want %v", path, err, ErrUnsupported)
		}
	}
}

func TestResourceValue(t *testing.T) {
	alloc := func() (corev1.ResourceList, error) {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}, nil
	}
	for _, tc := range []struct {
		container, res, divisor, want string
	}{
		{"app", "limits.cpu", "", "2"}, // 1500m rounded up
		{"app", "limits.cpu", "1m", "1500"},
		{"app", "requests.cpu", "1m", "250"},
		{"app", "requests.cpu", "", "1"},
		{"app", "limits.memory", "", "67108864"},
		{"app", "limits.memory", "1Mi", "64"},
		{"app", "requests.memory", "1Mi", "32"},
		{"app", "limits.ephemeral-storage", "1Gi", "100"}, // allocatable
		{"bare", "limits.cpu", "", "4"},
		{"bare", "limits.memory", "1Gi", "8"},
		{"bare", "requests.cpu", "", "0"},
		{"bare", "requests.ephemeral-storage", "", "0"},
	} {
		ref := &corev1.ResourceFieldSelector{Resource: tc.res}
		if tc.divisor != "" {
			ref.Divisor = resource.MustParse(tc.divisor)
		}
		got, err := ResourceValue(testPod(), tc.container, ref, alloc)
		if err != nil || got != tc.want {
			t.Errorf("%s %s /%s = %q, %v; want %q", tc.container, tc.res, tc.divisor, got, err, tc.want)
		}
	}
	// A limit the container does not set is the pod's own when the pod
	// sets one (pod-level resources), before the node's allocatable;
	// ephemeral-storage is not a pod-level resource.
	withPodLevel := testPod()
	withPodLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}
	for _, tc := range []struct{ container, res, want string }{
		{"bare", "limits.cpu", "3"},
		{"bare", "limits.memory", "1073741824"},
		{"bare", "limits.ephemeral-storage", "107374182400"}, // allocatable
		{"app", "limits.cpu", "2"},                           // its own
	} {
		if got, err := ResourceValue(withPodLevel, tc.container, &corev1.ResourceFieldSelector{Resource: tc.res}, alloc); err != nil || got != tc.want {
			t.Errorf("pod-level: %s %s = %q, %v; want %q", tc.container, tc.res, got, err, tc.want)
		}
	}
	// containerName wins over the container asking.
	if got, err := ResourceValue(testPod(), "bare", &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}, nil); err != nil || got != "32" {
		t.Errorf("containerName app = %q, %v; want 32", got, err)
	}
	for _, tc := range []struct {
		container, res string
		alloc          Allocatable
		want           string
	}{
		{"bare", "limits.cpu", nil, "allocatable is unknown"},
		{"bare", "limits.cpu", func() (corev1.ResourceList, error) { return nil, errors.New("boom") }, "boom"},
		{"app", "limits.hugepages-2Mi", alloc, "not supported"},
		{"ghost", "limits.cpu", alloc, `no container "ghost"`},
	} {
		_, err := ResourceValue(testPod(), tc.container, &corev1.ResourceFieldSelector{Resource: tc.res}, tc.alloc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want one saying %q", tc.container, tc.res, err, tc.want)
		}
	}
}
