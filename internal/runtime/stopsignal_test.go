package runtime

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStopSignal(t *testing.T) {
	for _, tc := range []struct {
		runtime, version string
		signal           corev1.Signal
		want             runtimeapi.Signal
		refused          bool
	}{
		{"containerd", "1.6.20~ds1", corev1.SIGUSR1, 0, true},
		{"containerd", "v2.0.5", corev1.SIGUSR1, 0, true},
		{"containerd", "v2.1.4", corev1.SIGUSR1, runtimeapi.Signal_SIGNAL_SIGUSR1, false},
		{"containerd", "2.2.0", corev1.SIGQUIT, runtimeapi.Signal_SIGNAL_SIGQUIT, false},
		{"containerd", "garbage", corev1.SIGQUIT, 0, true},
		{"cri-o", "1.34.0", corev1.SIGTERM, runtimeapi.Signal_SIGNAL_SIGTERM, false},
		{"containerd", "2.1.0", "SIGNOPE", 0, true},
	} {
		r := &Runtime{version: VersionInfo{RuntimeName: tc.runtime, RuntimeVersion: tc.version}}
		got, err := r.stopSignal(tc.signal)
		if got != tc.want || (err != nil) != tc.refused || err != nil && !errors.Is(err, ErrContainerConfig) {
			t.Errorf("%s %s %s: %v, %v; want %v, refused %v", tc.runtime, tc.version, tc.signal, got, err, tc.want, tc.refused)
		}
	}
}
