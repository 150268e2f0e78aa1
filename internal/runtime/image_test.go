package runtime

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSyncPodImages(t *testing.T) {
	for _, tc := range []struct {
		name      string
		image     string
		policy    corev1.PullPolicy
		pullErr   error
		wantErr   error
		wantText  string
		wantPulls int
	}{
		{name: "present: no pull", image: "busybox:1", policy: corev1.PullAlways},
		{name: "absent: pulled", image: "busybox:3", policy: corev1.PullIfNotPresent, wantPulls: 1},
		{name: "absent, Never", image: "busybox:3", policy: corev1.PullNever, wantErr: ErrImageNeverPull,
			wantText: `image "busybox:3" not present and pull policy is Never`},
		{name: "absent, pull fails", image: "busybox:3", policy: corev1.PullIfNotPresent, pullErr: errors.New("no registry"),
			wantErr: ErrImagePull, wantText: `image "busybox:3" not present: image pull failed: no registry`, wantPulls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.pullErr != nil {
				w.images.InjectError("PullImage", tc.pullErr)
			}
			pod := newPod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = tc.image, tc.policy
			})
			res, err := w.sync(pod, nil)
			for _, a := range res.Actions {
				if a.Kind == ActionStartContainer && a.Err == nil && a.PulledImage != (tc.wantPulls == 1) {
					t.Errorf("start action says pulled=%v after %d pulls", a.PulledImage, tc.wantPulls)
				}
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantText != "" && !strings.Contains(err.Error(), tc.wantText)) {
				t.Errorf("SyncPod error = %v, want %v containing %q", err, tc.wantErr, tc.wantText)
			}
			pulls := 0
			for _, c := range w.images.Called {
				if c == "PullImage" {
					pulls++
				}
			}
			if pulls != tc.wantPulls {
				t.Errorf("%d pulls, want %d", pulls, tc.wantPulls)
			}
		})
	}
}
