package images

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestParseReference(t *testing.T) {
	const digest = "sha256:0123456789012345678901234567890123456789012345678901234567890123"
	for _, tc := range []struct {
		image  string
		want   Reference
		policy corev1.PullPolicy
	}{
		{"busybox", Reference{Image: "busybox:latest", Repository: "docker.io/library/busybox", Tag: "latest"}, corev1.PullAlways},
		{"busybox:latest", Reference{Image: "busybox:latest", Repository: "docker.io/library/busybox", Tag: "latest"}, corev1.PullAlways},
		{"busybox:1.36", Reference{Image: "busybox:1.36", Repository: "docker.io/library/busybox", Tag: "1.36"}, corev1.PullIfNotPresent},
		{"127.0.0.1:5000/private/busybox:1", Reference{Image: "127.0.0.1:5000/private/busybox:1", Repository: "127.0.0.1:5000/private/busybox", Tag: "1"}, corev1.PullIfNotPresent},
		{"127.0.0.1:5000/private/busybox", Reference{Image: "127.0.0.1:5000/private/busybox:latest", Repository: "127.0.0.1:5000/private/busybox", Tag: "latest"}, corev1.PullAlways},
		{"r.example.com/app@" + digest, Reference{Image: "r.example.com/app@" + digest, Repository: "r.example.com/app", Digest: digest}, corev1.PullIfNotPresent},
		// A digest pins the image, whatever the tag says.
		{"r.example.com/app:latest@" + digest, Reference{Image: "r.example.com/app:latest@" + digest, Repository: "r.example.com/app", Tag: "latest", Digest: digest}, corev1.PullIfNotPresent},
	} {
		got, err := ParseReference(tc.image)
		if err != nil {
			t.Errorf("ParseReference(%q): %v", tc.image, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseReference(%q) (-want +got):\n%s", tc.image, diff)
		}
		if p := got.DefaultPullPolicy(); p != tc.policy {
			t.Errorf("%q: default policy %s, want %s", tc.image, p, tc.policy)
		}
	}
	for _, bad := range []string{"", "Busybox", "busybox:", "a b", "r.example.com/app@sha256:short", "-x/y"} {
		if _, err := ParseReference(bad); err == nil {
			t.Errorf("ParseReference(%q): no error", bad)
		}
	}
}
