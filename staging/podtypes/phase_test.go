package podtypes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestIsTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		"": false, corev1.PodPending: false, corev1.PodRunning: false, corev1.PodUnknown: false,
		corev1.PodSucceeded: true, corev1.PodFailed: true,
	} {
		if got := IsTerminal(phase); got != want {
			t.Errorf("IsTerminal(%q) = %v, want %v", phase, got, want)
		}
	}
}
