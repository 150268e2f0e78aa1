package status

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLimitTerminationMessages(t *testing.T) {
	terminated := func(msg string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg}}
	}
	k4 := strings.Repeat("m", 4096)
	for _, tc := range []struct {
		name           string
		init, app, eph int
		want           int // each message's length after
	}{
		{name: "one container keeps its 4 KiB", app: 1, want: 4096},
		{name: "three share 12 KiB: 4 KiB each", app: 3, want: 4096},
		{name: "four: 3 KiB each", app: 4, want: 3072},
		{name: "init and ephemeral containers count", init: 2, app: 3, eph: 1, want: 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{
				InitContainers:      make([]corev1.Container, tc.init),
				Containers:          make([]corev1.Container, tc.app),
				EphemeralContainers: make([]corev1.EphemeralContainer, tc.eph),
			}}
			var st corev1.PodStatus
			for range tc.init {
				st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{State: terminated(k4)})
			}
			for range tc.app {
				st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: terminated(k4)})
			}
			limitTerminationMessages(pod, &st)
			for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
				for _, s := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
					if s.Terminated != nil && len(s.Terminated.Message) != tc.want {
						t.Errorf("message of %d bytes, want %d", len(s.Terminated.Message), tc.want)
					}
				}
			}
		})
	}
}
