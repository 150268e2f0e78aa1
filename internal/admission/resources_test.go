package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func apiequal(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

func TestCountedResources(t *testing.T) {
	for _, tc := range []struct {
		name              corev1.ResourceName
		counted, extended bool
	}{
		{"example.com/gpu", true, true},
		{"nvidia.com/gpu", true, true},
		{"hugepages-2Mi", true, false},
		{"kubernetes.io/batch-cpu", true, false},
		{"attachable-volumes-aws-ebs", true, false},
		{"requests.example.com/gpu", false, false},
		{"example.com/bad name", false, false},
		{"pods", false, false},
		{"something", false, false},
	} {
		if got := counted(tc.name); got != tc.counted {
			t.Errorf("counted(%q) = %v, want %v", tc.name, got, tc.counted)
		}
		if got := extended(tc.name); got != tc.extended {
			t.Errorf("extended(%q) = %v, want %v", tc.name, got, tc.extended)
		}
	}
}
