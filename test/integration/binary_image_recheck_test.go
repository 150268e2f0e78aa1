package integration

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// TestBinaryImagePullSecretRecheck: an image the agent pulled with one
// pod's pull secret is not handed to a pod without the right to it, as
// the kubelet's ensure-secret-pulled-images rule (its default policy,
// NeverVerifyPreloadedImages): with pull policy IfNotPresent, a pod with
// no secret pulls it itself and the registry refuses it; a pod holding
// the same credentials in a secret of its own uses the present image
// without a pull.
func TestBinaryImagePullSecretRecheck(t *testing.T) {
	image := env.Registry.Image(framework.PrivateBusybox + ":1")
	removeImage(t, image)
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	createPullSecret(t, "recheck-cred", env.Registry.User, env.Registry.Password)
	createPullSecret(t, "recheck-cred-copy", env.Registry.User, env.Registry.Password)

	ifNotPresent := func(name string, secrets ...string) *corev1.Pod {
		return h.imagePod(name, image, corev1.PullIfNotPresent, secrets...)
	}
	manifestPulls := func() int {
		t.Helper()
		n, err := env.Registry.Requests("/v2/"+framework.PrivateBusybox+"/manifests/", " 200 ")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	owner := h.createAPIPod(ifNotPresent("recheck-owner", "recheck-cred"))
	h.waitAPIPod(owner.Name, "Running", 60*time.Second, apiPodRunning(owner.UID))

	stranger := h.createAPIPod(ifNotPresent("recheck-stranger"))
	got := h.waitAPIPod(stranger.Name, "ErrImagePull", 30*time.Second, waitingReason("ErrImagePull"))
	if msg := got.Status.ContainerStatuses[0].State.Waiting.Message; !strings.Contains(msg, "401") {
		t.Errorf("the pod without a secret waits with %q, want the registry's 401", msg)
	}

	before := manifestPulls()
	holder := h.createAPIPod(ifNotPresent("recheck-copy-holder", "recheck-cred-copy"))
	h.waitAPIPod(holder.Name, "Running", 60*time.Second, apiPodRunning(holder.UID))
	if after := manifestPulls(); after != before {
		t.Errorf("the registry served the manifest %d times more: the pod holding the same credentials pulled again", after-before)
	}
}
