package integration

import (
	"context"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// TestRegistry: the tests' registry serves the busybox image under a
// private repository over TLS that containerd trusts, to containerd's
// pulls with the right credentials only.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	cri := env.CRI(t)
	reg := env.Registry
	image := reg.Image(framework.PrivateBusybox + ":1")
	spec := &runtimeapi.ImageSpec{Image: image}
	t.Cleanup(func() { _, _ = cri.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: spec}) })

	for _, tc := range []struct {
		name string
		auth *runtimeapi.AuthConfig
	}{
		{"without credentials", nil},
		{"with a wrong password", &runtimeapi.AuthConfig{Username: reg.User, Password: "wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cri.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, Auth: tc.auth})
			if err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("pull %s: %v, want a refusal (401)", tc.name, err)
			}
		})
	}
	t.Run("with the credentials", func(t *testing.T) {
		resp, err := cri.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec,
			Auth: &runtimeapi.AuthConfig{Username: reg.User, Password: reg.Password}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := cri.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: resp.ImageRef}})
		if err != nil || st.GetImage() == nil {
			t.Fatalf("image status of %s: %v, %v", resp.ImageRef, st, err)
		}
		if got := st.GetImage().GetRepoTags(); len(got) != 1 || got[0] != image {
			t.Errorf("repo tags %v, want only %s: removing it would remove the others too", got, image)
		}
	})
}
