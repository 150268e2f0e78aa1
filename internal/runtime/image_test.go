package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"

	"github.com/nodeagent/nodeagent/internal/images"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// registryImages is the fake image service as a registry that wants a
// password: a pull with other credentials fails, and every pull's
// credentials are recorded ("" for none).
type registryImages struct {
	*critest.FakeImageService
	password string // "": anyone may pull

	mu    sync.Mutex
	pulls []string // image as user:password, or the image alone
}

func (r *registryImages) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sb *runtimeapi.PodSandboxConfig) (string, error) {
	r.mu.Lock()
	who := image.Image
	if auth != nil {
		who += " as " + auth.Username + ":" + auth.Password
	}
	r.pulls = append(r.pulls, who)
	r.mu.Unlock()
	if r.password != "" && auth.GetPassword() != r.password {
		return "", errors.New("401 Unauthorized")
	}
	return r.FakeImageService.PullImage(ctx, image, auth, sb)
}

func (r *registryImages) pulled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.pulls...)
}

// imageWorld is a world whose runtime pulls from a registryImages.
func imageWorld(t *testing.T, opts func(*Options)) (*world, *registryImages) {
	w := newWorld(t)
	reg := &registryImages{FakeImageService: w.images}
	o := Options{Endpoint: "unix:///fake.sock", LogRoot: w.logRoot, Cgroups: testCgroups(w.cgroupFS), Logger: testr.New(t), Clock: w.clock}
	if opts != nil {
		opts(&o)
	}
	w.rt = newRuntime(o, w.cri, reg)
	return w, reg
}

func TestSyncPodPullPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		image    string
		policy   corev1.PullPolicy
		ifAbsent bool // Options.ImagePullAlwaysIfAbsent
		pullErr  error
		wantErr  error
		wantText string
		// wantPulls are the images pulled.
		wantPulls []string
	}{
		{name: "Always, present: pulled again", image: "busybox:1", policy: corev1.PullAlways, wantPulls: []string{"busybox:1"}},
		{name: "Always, present, offline-first: used as it is", image: "busybox:1", policy: corev1.PullAlways, ifAbsent: true},
		{name: "Always, absent, offline-first: pulled", image: "busybox:3", policy: corev1.PullAlways, ifAbsent: true, wantPulls: []string{"busybox:3"}},
		{name: "IfNotPresent, present", image: "busybox:1", policy: corev1.PullIfNotPresent},
		{name: "IfNotPresent, absent: pulled", image: "busybox:3", policy: corev1.PullIfNotPresent, wantPulls: []string{"busybox:3"}},
		{name: "Never, present", image: "busybox:1", policy: corev1.PullNever},
		{name: "Never, absent", image: "busybox:3", policy: corev1.PullNever, wantErr: ErrImageNeverPull,
			wantText: `Container image "busybox:3" is not present with pull policy of Never`},
		{name: "no policy, fixed tag: IfNotPresent", image: "busybox:1"},
		{name: "no policy, no tag: Always, as latest", image: "busybox", wantPulls: []string{"busybox:latest"}},
		{name: "invalid name", image: "Busybox:1", policy: corev1.PullIfNotPresent, wantErr: ErrInvalidImageName,
			wantText: `Failed to apply default image tag "Busybox:1"`},
		{name: "pull fails", image: "busybox:3", policy: corev1.PullIfNotPresent, pullErr: errors.New("no registry"),
			wantErr: ErrImagePull, wantText: "no registry", wantPulls: []string{"busybox:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, reg := imageWorld(t, func(o *Options) { o.ImagePullAlwaysIfAbsent = tc.ifAbsent })
			if tc.pullErr != nil {
				w.images.InjectError("PullImage", tc.pullErr)
			}
			pod := newPod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = tc.image, tc.policy
			})
			res, err := w.sync(pod, nil)
			if !errors.Is(err, tc.wantErr) || (tc.wantText != "" && !strings.Contains(err.Error(), tc.wantText)) {
				t.Errorf("SyncPod error = %v, want %v containing %q", err, tc.wantErr, tc.wantText)
			}
			if diff := cmp.Diff(tc.wantPulls, reg.pulled()); diff != "" {
				t.Errorf("pulls (-want +got):\n%s", diff)
			}
			for _, a := range res.Actions {
				if a.Kind == ActionStartContainer && a.Err == nil && a.Image.Pulled != (len(tc.wantPulls) == 1) {
					t.Errorf("start action says pulled=%v after pulls %v", a.Image.Pulled, tc.wantPulls)
				}
			}
		})
	}
}

func pullSecret(name, json string) *corev1.Secret {
	return &corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(json)}}
}

func TestSyncPodPullCredentials(t *testing.T) {
	sources := fakeSources{secrets: map[string]*corev1.Secret{
		"default/wrong": pullSecret("wrong", `{"auths": {"r.example.com": {"username": "u", "password": "wrong"}}}`),
		"default/right": pullSecret("right", `{"auths": {"r.example.com/team": {"username": "u", "password": "right"}}}`),
		"default/other": pullSecret("other", `{"auths": {"other.example.com": {"username": "o", "password": "right"}}}`),
		"default/bad":   pullSecret("bad", `{"auths": `),
	}}
	for _, tc := range []struct {
		name      string
		secrets   []string
		static    bool
		node      string // the password of the node's docker config for the registry; empty: none
		plugin    bool   // a credential provider plugin answers for the registry
		wantErr   error
		wantPulls []string
	}{
		{name: "no secrets: anonymous", wantErr: ErrImagePull, wantPulls: []string{"r.example.com/team/app:1"}},
		// The most specific location first: the team's, then the host's.
		{name: "the matching secrets, most specific first", secrets: []string{"wrong", "right"},
			wantPulls: []string{"r.example.com/team/app:1 as u:right"}},
		{name: "each in turn until one works", secrets: []string{"wrong", "other"}, wantErr: ErrImagePull,
			wantPulls: []string{"r.example.com/team/app:1 as u:wrong"}},
		{name: "a missing secret is skipped", secrets: []string{"absent", "right"},
			wantPulls: []string{"r.example.com/team/app:1 as u:right"}},
		{name: "an unparsable secret fails the pull", secrets: []string{"bad", "right"}, wantErr: ErrImagePull},
		{name: "a static pod has none", secrets: []string{"right"}, static: true, wantErr: ErrImagePull,
			wantPulls: []string{"r.example.com/team/app:1"}},
		{name: "a static pod has the node's", static: true, node: "right",
			wantPulls: []string{"r.example.com/team/app:1 as node:right"}},
		{name: "the pod's secrets first, then the node's", secrets: []string{"wrong"}, node: "right",
			wantPulls: []string{"r.example.com/team/app:1 as u:wrong", "r.example.com/team/app:1 as node:right"}},
		{name: "a static pod has the plugin's", static: true, plugin: true,
			wantPulls: []string{"r.example.com/team/app:1 as plugin:right"}},
		{name: "the pod's secrets, the node's docker config, then the plugin's", secrets: []string{"wrong"}, node: "wrong", plugin: true,
			wantPulls: []string{"r.example.com/team/app:1 as u:wrong", "r.example.com/team/app:1 as node:wrong", "r.example.com/team/app:1 as plugin:right"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeConfig := filepath.Join(t.TempDir(), "config.json")
			if tc.node != "" {
				if err := os.WriteFile(nodeConfig, []byte(`{"auths": {"r.example.com": {"username": "node", "password": "`+tc.node+`"}}}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var plugins *images.CredentialProviders
			if tc.plugin {
				plugins = answeringPlugin(t, "r.example.com", `{"r.example.com": {"username": "plugin", "password": "right"}}`)
			}
			w, reg := imageWorld(t, func(o *Options) {
				o.Sources = sources
				o.NodeDockerConfigPaths = []string{nodeConfig}
				o.CredentialProviders = plugins
			})
			reg.password = "right"
			pod := newPod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = "r.example.com/team/app:1"
				for _, s := range tc.secrets {
					p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
				}
				if tc.static {
					p.Annotations = map[string]string{podtypes.ConfigSourceAnnotationKey: string(podtypes.FileSource)}
				}
			})
			if _, err := w.sync(pod, nil); !errors.Is(err, tc.wantErr) {
				t.Errorf("SyncPod error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantPulls, reg.pulled()); diff != "" {
				t.Errorf("pulls (-want +got):\n%s", diff)
			}
		})
	}
}

// answeringPlugin is a credential provider plugin for images of
// matchImage, a shell script that answers auth, uncached.
func answeringPlugin(t *testing.T, matchImage, auth string) *images.CredentialProviders {
	t.Helper()
	dir := t.TempDir()
	resp := `{"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "kind": "CredentialProviderResponse", "cacheKeyType": "Image", "auth": ` + auth + `}`
	script := "#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\n" + resp + "\nEOF\n"
	config := `{"apiVersion": "kubelet.config.k8s.io/v1", "kind": "CredentialProviderConfig", "providers": [{"name": "answer",
		"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "matchImages": ["` + matchImage + `"], "defaultCacheDuration": "0s"}]}`
	if err := os.WriteFile(filepath.Join(dir, "answer"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := images.NewCredentialProviders(images.CredentialProviderOptions{ConfigPath: filepath.Join(dir, "config.json"), BinDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// A failed pull backs off, per pod and image: 10 s, then doubling; each
// sync within the back-off answers ImagePullBackOff with the last error.
func TestSyncPodPullBackoff(t *testing.T) {
	w, reg := imageWorld(t, nil)
	reg.password = "right"
	pod := newPod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "r.example.com/app:1" })
	other := newPod(func(p *corev1.Pod) {
		p.UID = "u2"
		p.Name = "other"
		p.Spec.Containers[0].Image = "r.example.com/app:1"
	})
	step := func(d time.Duration, p *corev1.Pod, want error, wantPulls int) {
		t.Helper()
		w.clock.Step(d)
		before := len(reg.pulled())
		_, err := w.sync(p, nil)
		if !errors.Is(err, want) {
			t.Fatalf("after %v: SyncPod error = %v, want %v", d, err, want)
		}
		if got := len(reg.pulled()) - before; got != wantPulls {
			t.Fatalf("after %v: %d pulls, want %d", d, got, wantPulls)
		}
		if errors.Is(err, ErrImagePullBackOff) && !strings.Contains(err.Error(), `Back-off pulling image "r.example.com/app:1": ErrImagePull: 401 Unauthorized`) {
			t.Errorf("back-off message %q", err)
		}
	}
	step(0, pod, ErrImagePull, 1)
	step(0, pod, ErrImagePullBackOff, 0)
	step(0, other, ErrImagePull, 1) // another pod has its own back-off
	step(9*time.Second, pod, ErrImagePullBackOff, 0)
	step(time.Second, pod, ErrImagePull, 1) // 10 s
	step(19*time.Second, pod, ErrImagePullBackOff, 0)
	step(time.Second, pod, ErrImagePull, 1) // 20 s
	step(39*time.Second, pod, ErrImagePullBackOff, 0)
	reg.password = ""
	step(time.Second, pod, nil, 1) // 40 s; the registry lets it in now
}

func TestPullBackoffCapsAndStartsOver(t *testing.T) {
	w := newWorld(t)
	b := newPullBackoff(w.clock, 10*time.Second, 5*time.Minute)
	key := pullBackoffKey("u1", "x:1")
	var delays []time.Duration
	for range 7 {
		b.failed(key, "no")
		delay := b.backoff.Get(key)
		delays = append(delays, delay)
		w.clock.Step(delay - time.Nanosecond)
		if waiting, _ := b.wait(key); !waiting {
			t.Fatalf("not waiting %v after a failure backed off %v", delay-time.Nanosecond, delay)
		}
		w.clock.Step(time.Nanosecond)
		if waiting, _ := b.wait(key); waiting {
			t.Fatalf("still waiting %v after a failure backed off %v", delay, delay)
		}
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	// Quiet for more than twice the cap: the next failure starts over.
	w.clock.Step(11 * time.Minute)
	b.failed(key, "no")
	if got := b.backoff.Get(key); got != 10*time.Second {
		t.Errorf("after a long quiet: %v, want 10s", got)
	}
	b.forget("u1")
	if waiting, _ := b.wait(key); waiting {
		t.Error("waiting after forget")
	}
	b.failed(key, "no")
	w.clock.Step(11 * time.Minute)
	b.prune()
	if len(b.messages) != 0 || b.backoff.Get(key) != 0 {
		t.Errorf("prune left %d entries (back-off %v)", len(b.messages), b.backoff.Get(key))
	}
}
