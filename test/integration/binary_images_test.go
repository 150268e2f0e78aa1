package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// Images pulled from the tests' registry (framework.Registry: TLS from a
// test CA, basic auth) through the built binary and the real containerd.

// createPullSecret creates a kubernetes.io/dockerconfigjson secret for the
// registry's host with user and password, deleted when the test ends.
func createPullSecret(t *testing.T, name, user, password string) {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, env.Registry.Host, auth)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(cfg)}}
	if _, err := env.AdminClient.CoreV1().Secrets(metav1.NamespaceDefault).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.AdminClient.CoreV1().Secrets(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// removeImage makes containerd forget image, now and when the test ends,
// so that a pull must reach the registry.
func removeImage(t *testing.T, image string) {
	t.Helper()
	cri := env.CRI(t)
	rm := func() {
		_, _ = cri.Images.RemoveImage(context.Background(), &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	}
	rm()
	t.Cleanup(rm)
}

// imagePod is an API pod whose one container runs image with policy,
// pulled with the named pull secrets.
func (h *agentHarness) imagePod(name, image string, policy corev1.PullPolicy, secrets ...string) *corev1.Pod {
	c := shContainer("main", sleepForever)
	c.Image, c.ImagePullPolicy = image, policy
	pod := h.apiPodSpec(name, c)
	for _, s := range secrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return pod
}

// waitingReason: the pod's container waits with reason.
func waitingReason(reason string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		if p == nil || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == reason
	}
}

// podEventReasons lists the reasons and messages of the pod's events.
func podEventReasons(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	evs, err := env.AdminClient.CoreV1().Events(pod.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod.Name + ",involvedObject.uid=" + string(pod.UID)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// TestBinaryImagePullSecrets: an API pod's private image is pulled with
// the credentials of its imagePullSecret; without one, or with a wrong
// password, the pull is refused: ErrImagePull, then ImagePullBackOff, with
// the kubelet's events.
func TestBinaryImagePullSecrets(t *testing.T) {
	image := env.Registry.Image(framework.PrivateBusybox + ":1")
	removeImage(t, image)
	h := newConnectedAgent(t)
	waitNode(t, "Ready", 30*time.Second, isReady)
	createPullSecret(t, "regcred", env.Registry.User, env.Registry.Password)
	createPullSecret(t, "regcred-wrong", env.Registry.User, "not-the-password")

	// Always: each pod's pull must reach the registry, whoever pulled
	// the image before.
	private := func(name string, secrets ...string) *corev1.Pod {
		return h.imagePod(name, image, corev1.PullAlways, secrets...)
	}
	for _, tc := range []struct {
		name    string
		secrets []string
	}{
		{"no-secret", nil},
		{"wrong-password", []string{"regcred-wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := h.createAPIPod(private(tc.name, tc.secrets...))
			h.waitAPIPod(pod.Name, "ErrImagePull", 30*time.Second, waitingReason("ErrImagePull"))
			// The next pull waits 10 s, then 20 s: the syncs in between
			// (every 10 s) find the pull backing off.
			got := h.waitAPIPod(pod.Name, "ImagePullBackOff", 60*time.Second, waitingReason("ImagePullBackOff"))
			msg := got.Status.ContainerStatuses[0].State.Waiting.Message
			if !strings.Contains(msg, fmt.Sprintf("Back-off pulling image %q", image)) || !strings.Contains(msg, "401") {
				t.Errorf("waiting message %q, want the back-off and the registry's 401", msg)
			}
			evs := podEventReasons(t, pod)
			for _, want := range []string{"Pulling: Pulling image", "Failed: Failed to pull image", "Failed: Error: ErrImagePull",
				"BackOff: Back-off pulling image", "Failed: Error: ImagePullBackOff"} {
				if !hasEvent(evs, want) {
					t.Errorf("no event %q in %q", want, evs)
				}
			}
		})
	}
	t.Run("with-secret", func(t *testing.T) {
		before, err := env.Registry.Requests("/v2/"+framework.PrivateBusybox+"/manifests/", " 200 ", "user=\""+env.Registry.User+"\"")
		if err != nil {
			t.Fatal(err)
		}
		pod := h.createAPIPod(private("with-secret", "regcred-wrong", "regcred"))
		h.waitAPIPod(pod.Name, "Running", 60*time.Second, apiPodRunning(pod.UID))
		after, _ := env.Registry.Requests("/v2/"+framework.PrivateBusybox+"/manifests/", " 200 ", "user=\""+env.Registry.User+"\"")
		if after <= before {
			t.Errorf("the registry served the manifest to the user %d times before, %d after: not pulled with the secret", before, after)
		}
		eventuallyTrue(t, "the pull's events", 10*time.Second, func() (bool, string) {
			evs := podEventReasons(t, pod)
			return hasEvent(evs, "Pulling: Pulling image") && hasEvent(evs, fmt.Sprintf("Pulled: Successfully pulled image %q in ", image)), fmt.Sprint(evs)
		})
	})
}

// TestBinaryImagePullAlways: with pull policy Always, a container that
// starts again after its tag moved to another image runs the new digest;
// with IfNotPresent the present image stays.
func TestBinaryImagePullAlways(t *testing.T) {
	const repo = "public/retag:v"
	image := env.Registry.Image(repo)
	removeImage(t, image)
	first, err := env.Registry.PushBusybox(repo, "VARIANT=1")
	if err != nil {
		t.Fatal(err)
	}
	h := newAgent(t)
	c := shContainer("main", `echo "variant $VARIANT"; `+sleepForever)
	c.Image, c.ImagePullPolicy = image, corev1.PullAlways
	pod := testPod("retag", c)
	h.writeManifest(pod)
	h.waitPod("retag", "running", 60*time.Second, runningContainer("main"))
	digestOf := func() string {
		t.Helper()
		for _, c := range h.containers("retag", true) {
			st, err := h.cri.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
			if err != nil {
				t.Fatal(err)
			}
			return st.GetStatus().GetImageRef()
		}
		t.Fatal("no running container")
		return ""
	}
	if got := h.exec("retag", "main", "sh", "-c", "echo $VARIANT"); strings.TrimSpace(got) != "1" {
		t.Fatalf("VARIANT=%q, want 1", got)
	}
	if ref := digestOf(); !strings.Contains(ref, first) {
		t.Errorf("first instance runs %s, want %s", ref, first)
	}

	second, err := env.Registry.PushBusybox(repo, "VARIANT=2")
	if err != nil {
		t.Fatal(err)
	}
	oldID := h.runningIDs("retag")["main"]
	// The container exits (its TERM trap) and restarts at once: the
	// restart pulls again.
	h.exec("retag", "main", "kill", "1")
	h.waitPod("retag", "restarted", 60*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && c.State == localapi.StateRunning && !strings.HasSuffix(c.ContainerID, oldID)
	})
	if got := h.exec("retag", "main", "sh", "-c", "echo $VARIANT"); strings.TrimSpace(got) != "2" {
		t.Fatalf("after the tag moved: VARIANT=%q, want 2", got)
	}
	if ref := digestOf(); !strings.Contains(ref, second) {
		t.Errorf("restarted instance runs %s, want %s", ref, second)
	}
}

// TestBinaryImageNodeCredentials: a static pod, which may name no pull
// secret, pulls a private image with the node's own credentials
// (<root-dir>/config.json, where the kubelet looks first); without them
// its pull is refused.
func TestBinaryImageNodeCredentials(t *testing.T) {
	image := env.Registry.Image(framework.PrivateBusybox + ":1")
	removeImage(t, image)
	h := newAgent(t)
	c := shContainer("main", sleepForever)
	c.Image, c.ImagePullPolicy = image, corev1.PullIfNotPresent
	h.writeManifest(testPod("node-creds", c))
	h.waitPod("node-creds", "ErrImagePull", 30*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && (c.Reason == "ErrImagePull" || c.Reason == "ImagePullBackOff")
	})

	auth := base64.StdEncoding.EncodeToString([]byte(env.Registry.User + ":" + env.Registry.Password))
	cfg := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, env.Registry.Host, auth)
	if err := os.WriteFile(filepath.Join(h.dir, "root", "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// The next pull, once the back-off lets it, uses the file.
	h.waitPod("node-creds", "running", 60*time.Second, runningContainer("main"))
}

// TestBinaryImagePullBackOffGrows: a pull the registry keeps refusing is
// retried after growing intervals (the kubelet's 10 s, 20 s, 40 s, as the
// pod's syncs, every 10 s, find the back-off over), as the registry's own
// log of the attempts shows.
func TestBinaryImagePullBackOffGrows(t *testing.T) {
	const repo = "private/backoff"
	h := newAgent(t)
	c := shContainer("main", sleepForever)
	c.Image, c.ImagePullPolicy = env.Registry.Image(repo+":1"), corev1.PullIfNotPresent
	h.writeManifest(testPod("backoff", c))

	// Attempts: the refusals of the repository's manifest, requests less
	// than 2 s apart counted as one attempt (the runtime may ask twice).
	attempts := func() []time.Time {
		data, err := os.ReadFile(env.Registry.Log)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Time
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, " /v2/"+repo+"/manifests/1 401 ") || len(line) < 19 {
				continue
			}
			at, err := time.ParseInLocation("2006/01/02 15:04:05", line[:19], time.Local)
			if err != nil {
				t.Fatalf("registry log line %q: %v", line, err)
			}
			if len(out) == 0 || at.Sub(out[len(out)-1]) >= 2*time.Second {
				out = append(out, at)
			}
		}
		return out
	}
	var got []time.Time
	eventuallyTrue(t, "four pull attempts", 150*time.Second, func() (bool, string) {
		got = attempts()
		return len(got) >= 4, fmt.Sprint(got)
	})
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		// One second of slack below (the log's timestamps are whole
		// seconds); above, up to two of the pod's jittered 10 s syncs.
		if gap := got[i+1].Sub(got[i]); gap < want-time.Second || gap > want+20*time.Second {
			t.Errorf("attempt %d came %v after the one before, want about %v (attempts %v)", i+2, gap, want, got)
		}
	}
	p := h.waitPod("backoff", "backing off", 10*time.Second, func(p localapi.Pod) bool {
		c := findContainer(p, "main")
		return c != nil && (c.Reason == "ImagePullBackOff" || c.Reason == "ErrImagePull")
	})
	t.Logf("attempts %v; status %s", got, findContainer(p, "main").Message)
}

// TestBinaryImageOnePullForManyPods: 20 pods that ask at once for an image
// the node lacks make the registry resolve its tag as often as one pod
// alone does: their containers share one pull.
func TestBinaryImageOnePullForManyPods(t *testing.T) {
	h := newAgent(t)
	resolves := func(repo string) int {
		t.Helper()
		n, err := env.Registry.Requests("/v2/"+repo+"/manifests/1 ", `user=""`)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	pull := func(repo string, pods int) int {
		t.Helper()
		image := env.Registry.Image(repo + ":1")
		removeImage(t, image)
		if _, err := env.Registry.PushBusybox(repo+":1", "REPO="+repo); err != nil {
			t.Fatal(err)
		}
		before := resolves(repo)
		for i := range pods {
			c := shContainer("main", sleepForever)
			c.Image, c.ImagePullPolicy = image, corev1.PullIfNotPresent
			h.writeManifest(testPod(fmt.Sprintf("%s-%d", filepath.Base(repo), i), c))
		}
		for i := range pods {
			h.waitPod(fmt.Sprintf("%s-%d", filepath.Base(repo), i), "running", 2*time.Minute, runningContainer("main"))
		}
		return resolves(repo) - before
	}
	one := pull("public/one-pod", 1)
	many := pull("public/twenty-pods", 20)
	t.Logf("tag resolved %d time(s) for one pod, %d for 20", one, many)
	if one == 0 || many != one {
		t.Errorf("the registry resolved the tag %d times for 20 pods, %d for one: want one pull's worth", many, one)
	}
}
