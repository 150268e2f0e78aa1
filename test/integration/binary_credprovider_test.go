package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// TestBinaryImageCredentialProvider: a pod without imagePullSecrets pulls
// the registry's private image with the credentials a credential
// provider plugin (internal/credplugin) answers; its answer is cached,
// so a second pod's pull, and a static pod's, within the cache duration
// do not run it again. A plugin that answers a wrong password leaves the
// pod in ErrImagePull, the registry's 401 in its message.
func TestBinaryImageCredentialProvider(t *testing.T) {
	image := env.Registry.Image(framework.PrivateBusybox + ":1")
	repo := env.Registry.Image(framework.PrivateBusybox)
	removeImage(t, image)
	private := func(h *agentHarness, name string) *corev1.Pod {
		c := shContainer("main", sleepForever)
		// Always: each pod's pull must reach the registry with the
		// plugin's credentials, whoever pulled the image before.
		c.Image, c.ImagePullPolicy = image, corev1.PullAlways
		return h.apiPodSpec(name, c)
	}

	t.Run("right password", func(t *testing.T) {
		runs := filepath.Join(t.TempDir(), "runs")
		// The config as a directory of files, the kubelet's other form.
		h := newConnectedAgent(t, credentialProviderArgs(t, runs, env.Registry.Password, true)...)
		waitNode(t, "Ready", 30*time.Second, isReady)
		served := func() int {
			n, err := env.Registry.Requests("/v2/"+framework.PrivateBusybox+"/manifests/", " 200 ", "user=\""+env.Registry.User+"\"")
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		before := served()
		first := h.createAPIPod(private(h, "plugin-first"))
		h.waitAPIPod(first.Name, "Running", 60*time.Second, apiPodRunning(first.UID))
		if got := pluginRuns(t, runs); len(got) != 1 || got[0] != repo {
			t.Fatalf("plugin runs %q, want one for %s", got, repo)
		}
		if after := served(); after <= before {
			t.Errorf("the registry served the manifest to the user %d times before, %d after: not pulled with the plugin's credentials", before, after)
		}

		before = served()
		second := h.createAPIPod(private(h, "plugin-second"))
		h.waitAPIPod(second.Name, "Running", 60*time.Second, apiPodRunning(second.UID))
		// A static pod may use the node's credentials: the plugin's too.
		c := shContainer("main", sleepForever)
		c.Image, c.ImagePullPolicy = image, corev1.PullAlways
		h.writeManifest(testPod("plugin-static", c))
		h.waitPod("plugin-static", "running", 60*time.Second, runningContainer("main"))
		if after := served(); after < before+2 {
			t.Errorf("the registry served the manifest to the user %d times before the two pulls, %d after", before, after)
		}
		if got := pluginRuns(t, runs); len(got) != 1 {
			t.Errorf("plugin runs %q, want still one: its answer is cached for 10 minutes", got)
		}
		// The kubelet's metrics of the plugin: one run timed, none failed.
		if n := h.metricWith(t, "kubelet_credential_provider_plugin_duration_count", `plugin_name="credplugin"`); n != 1 {
			t.Errorf("kubelet_credential_provider_plugin_duration_count = %v, want 1 run", n)
		}
		if n := h.metricWith(t, "kubelet_credential_provider_plugin_errors_total"); n != 0 {
			t.Errorf("kubelet_credential_provider_plugin_errors_total = %v, want 0", n)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		runs := filepath.Join(t.TempDir(), "runs")
		h := newConnectedAgent(t, credentialProviderArgs(t, runs, "not-the-password", false)...)
		waitNode(t, "Ready", 30*time.Second, isReady)
		pod := h.createAPIPod(private(h, "plugin-wrong"))
		got := h.waitAPIPod(pod.Name, "ErrImagePull", 60*time.Second, waitingReason("ErrImagePull"))
		if msg := got.Status.ContainerStatuses[0].State.Waiting.Message; !strings.Contains(msg, "401") {
			t.Errorf("waiting message %q, want the registry's 401", msg)
		}
		if got := pluginRuns(t, runs); len(got) == 0 {
			t.Errorf("the plugin never ran")
		}
	})
}

// credentialProviderArgs are the agent's flags for one provider,
// credplugin, answering the registry's user and password for its host,
// its runs logged to runs and its answer cached 10 minutes; asDir puts
// the config in a directory, beside a file that is not read.
func credentialProviderArgs(t *testing.T, runs, password string, asDir bool) []string {
	t.Helper()
	cfg := kubeletconfigv1.CredentialProviderConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletconfigv1.SchemeGroupVersion.String(), Kind: "CredentialProviderConfig"},
		Providers: []kubeletconfigv1.CredentialProvider{{
			Name:                 "credplugin",
			APIVersion:           "credentialprovider.kubelet.k8s.io/v1",
			MatchImages:          []string{env.Registry.Host},
			DefaultCacheDuration: &metav1.Duration{Duration: 10 * time.Minute},
			Env: []kubeletconfigv1.ExecEnvVar{
				{Name: "CREDPLUGIN_USER", Value: env.Registry.User},
				{Name: "CREDPLUGIN_PASSWORD", Value: password},
				{Name: "CREDPLUGIN_LOG", Value: runs},
			},
		}},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "credential-providers.json")
	file := path
	if asDir {
		path = t.TempDir()
		file = filepath.Join(path, "10-credplugin.json")
		if err := os.WriteFile(filepath.Join(path, "notes.txt"), []byte("not a config"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--image-credential-provider-config=" + path, "--image-credential-provider-bin-dir=" + credPluginDir(t)}
}

// pluginRuns are the images the plugin ran for, one per run.
func pluginRuns(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// credPluginDir builds internal/credplugin once per test process into a
// directory of its own, the agent's plugin bin dir, and returns it.
func credPluginDir(t testing.TB) string {
	t.Helper()
	v, _ := built.LoadOrStore("internal/credplugin", &builtBinary{})
	bin := v.(*builtBinary)
	bin.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "nodeagent-integration", "credplugin")
		if bin.err = os.MkdirAll(dir, 0o755); bin.err != nil {
			return
		}
		bin.path = dir
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "credplugin"), "./internal/credplugin")
		cmd.Dir = filepath.Join(env.RepoRoot, "test", "integration")
		if out, err := cmd.CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build ./internal/credplugin: %v\n%s", err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}
