package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// newAgentOnPrivate is newAgent on a containerd of the test's own, with
// its own pod cgroup parent.
func newAgentOnPrivate(t *testing.T, p *framework.PrivateContainerd, extraArgs ...string) *agentHarness {
	t.Helper()
	return newAgentOnPrivateNamed(t, p, "imagegc", extraArgs...)
}

// newConnectedAgentOnPrivate is newConnectedAgent on a containerd of the
// test's own.
func newConnectedAgentOnPrivate(t *testing.T, p *framework.PrivateContainerd, extraArgs ...string) *agentHarness {
	t.Helper()
	return newAgentOnPrivateNamed(t, p, env.NodeName, connectedArgs(t, extraArgs...)...)
}

func newAgentOnPrivateNamed(t *testing.T, p *framework.PrivateContainerd, node string, extraArgs ...string) *agentHarness {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "na")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	h := &agentHarness{
		t:         t,
		node:      node,
		dir:       t.TempDir(),
		socket:    filepath.Join(sockDir, "nodeagent.sock"),
		addr:      freeAddress(t),
		extraArgs: append([]string{"--cri-endpoint", p.Endpoint, "--cgroup-root", p.CgroupRoot}, extraArgs...),
		cri:       p.CRI,
	}
	h.manifests = filepath.Join(h.dir, "manifests")
	if err := os.MkdirAll(h.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.teardown)
	h.start()
	return h
}

// usagePercent is the filesystem's usage at path as the agent computes
// it: 100 - available*100/capacity.
func usagePercent(t *testing.T, path string) (int, uint64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	capacity, avail := st.Blocks*uint64(st.Bsize), st.Bavail*uint64(st.Bsize)
	return 100 - int(avail*100/capacity), capacity - avail
}

// TestBinaryImageGC: on a containerd of its own whose images live on a
// 170 MiB tmpfs (the shared containerd's busybox, which other tests run
// with pull policy Never, is out of reach), images of 8 MiB of their own
// each are pulled through pods that then go, one after another. When a
// last image pushes usage over --image-gc-high-threshold, the agent
// removes unused images, least recently used first, until usage is under
// --image-gc-low-threshold, and keeps the images in use and the sandbox
// image.
func TestBinaryImageGC(t *testing.T) {
	const high, low = 65, 50
	p := env.StartPrivateContainerd(t, "gc", "170m", "10.237.0.0/24")
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	refs := map[string]string{}
	for _, n := range names {
		repo := "gc/img-" + n + ":1"
		if _, err := env.Registry.PushBusyboxWithLayer(repo, 8<<20); err != nil {
			t.Fatal(err)
		}
		refs[n] = env.Registry.Image(repo)
	}
	h := newAgentOnPrivate(t, p, "--image-gc-high-threshold=65", "--image-gc-low-threshold=50",
		"--image-minimum-gc-age=5s", "--image-gc-period=1s")
	ctx := context.Background()
	present := func(image string) bool {
		resp, err := p.CRI.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", image, err)
		}
		return resp.GetImage().GetId() != ""
	}
	runs := func(name string) {
		t.Helper()
		if _, _, err := pollRunning(h.cri, h.podName(name), "", 60*time.Second); err != nil {
			t.Fatalf("pod %s: %v\n%s", name, err, h.log(40))
		}
	}
	imagePod := func(name, image string) *corev1.Pod {
		c := shContainer("main", sleepForever)
		c.Image, c.ImagePullPolicy = image, corev1.PullIfNotPresent
		return testPod(name, c)
	}

	// The local busybox stays in use throughout.
	h.writeManifest(testPod("keeper", shContainer("main", sleepForever)))
	runs("keeper")
	// a to f, each used for a while, then its pod goes: a is the least
	// recently used, f the most.
	for _, n := range names[:6] {
		h.writeManifest(imagePod("use-"+n, refs[n]))
		runs("use-" + n)
		time.Sleep(1500 * time.Millisecond) // a pass sees it in use
		if err := os.Remove(filepath.Join(h.manifests, "use-"+n+".yaml")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "pod use-"+n+" is gone", func() bool { return len(h.sandboxes("use-"+n)) == 0 })
		time.Sleep(1500 * time.Millisecond)
	}
	before, beforeBytes := usagePercent(t, p.Root)
	for _, n := range names[:6] {
		if !present(refs[n]) {
			t.Fatalf("image %s was removed at %d%% usage, under the high threshold of %d%%", n, before, high)
		}
	}
	if before >= high {
		t.Fatalf("six images already fill %d%% of the tmpfs: the test's sizes do not fit the threshold of %d%%", before, high)
	}

	// g, kept running, takes usage over the high threshold.
	h.writeManifest(imagePod("use-g", refs["g"]))
	runs("use-g")
	var after int
	var afterBytes uint64
	waitFor(t, 60*time.Second, "usage falls under the low threshold", func() bool {
		after, afterBytes = usagePercent(t, p.Root)
		return after <= low
	})
	var removed, kept []string
	for _, n := range names {
		if present(refs[n]) {
			kept = append(kept, n)
		} else {
			removed = append(removed, n)
		}
	}
	t.Logf("image filesystem: %d%% (%d MiB) with a-f, over %d%% with g, %d%% (%d MiB) after GC; removed %v, kept %v",
		before, beforeBytes>>20, high, after, afterBytes>>20, removed, kept)
	// Least recently used first: what went is a prefix of a..f.
	for i, n := range removed {
		if n != names[i] {
			t.Errorf("removed %v: not the least recently used first", removed)
			break
		}
	}
	if len(removed) == 0 || len(removed) >= 6 {
		t.Errorf("removed %v, want some of a..f, not all: the sizes removed stop at what brings usage under %d%%", removed, low)
	}
	if !present(refs["g"]) || !present(env.BusyboxImage) || !present(env.PauseImage) {
		t.Errorf("an image in use or the sandbox image was removed: g %v, busybox %v, pause %v",
			present(refs["g"]), present(env.BusyboxImage), present(env.PauseImage))
	}
	if got := h.metricWith(t, "nodeagent_image_gc_images_removed_total", `reason="space"`); int(got) != len(removed) {
		t.Errorf("nodeagent_image_gc_images_removed_total{reason=\"space\"} = %v, want %d", got, len(removed))
	}
	if got := h.metricWith(t, "nodeagent_image_gc_freed_bytes_total", `reason="space"`); got < float64(len(removed))*(8<<20) {
		t.Errorf("nodeagent_image_gc_freed_bytes_total{reason=\"space\"} = %v, want at least %d images of 8 MiB", got, len(removed))
	}
	// The pull records of the images removed went with them; those of the
	// images kept stay.
	recorded := func() map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			resp, err := p.CRI.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: refs[n]}})
			if err != nil {
				t.Fatal(err)
			}
			if id := resp.GetImage().GetId(); id != "" {
				out[id] = false
			}
		}
		files, err := filepath.Glob(filepath.Join(h.dir, "root", "image-pull-records", "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct{ ImageID string }
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[rec.ImageID] = true
		}
		return out
	}
	waitFor(t, 10*time.Second, "a pull record for each image kept and none for those removed", func() bool {
		for _, ok := range recorded() {
			if !ok {
				return false
			}
		}
		return len(recorded()) == len(kept)
	})
	// The keeper and g still run.
	runs("keeper")
	runs("use-g")
}

// TestBinaryImageMaxAge: with --image-maximum-gc-age, an image unused for
// longer goes whatever the disk usage (here, image GC for space is off),
// once the agent has run that long; an image in use and the sandbox image
// (which containerd 1.6 does not pin, and which no container uses) stay.
func TestBinaryImageMaxAge(t *testing.T) {
	const maxAge = 20 * time.Second
	p := env.StartPrivateContainerd(t, "gcage", "64m", "10.237.1.0/24")
	refs := map[string]string{}
	for _, n := range []string{"x", "y"} {
		repo := "gcage/img-" + n + ":1"
		if _, err := env.Registry.PushBusyboxWithLayer(repo, 1<<20); err != nil {
			t.Fatal(err)
		}
		refs[n] = env.Registry.Image(repo)
	}
	start := time.Now()
	h := newAgentOnPrivate(t, p, "--image-gc-high-threshold=100", "--image-gc-low-threshold=80",
		"--image-minimum-gc-age=5s", "--image-maximum-gc-age="+maxAge.String(), "--image-gc-period=1s")
	ctx := context.Background()
	present := func(image string) bool {
		resp, err := p.CRI.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", image, err)
		}
		return resp.GetImage().GetId() != ""
	}
	imagePod := func(name, image string) *corev1.Pod {
		c := shContainer("main", sleepForever)
		c.Image, c.ImagePullPolicy = image, corev1.PullIfNotPresent
		return testPod(name, c)
	}
	// x runs throughout; y runs for a moment, then its pod goes.
	for _, n := range []string{"x", "y"} {
		h.writeManifest(imagePod("use-"+n, refs[n]))
		if _, _, err := pollRunning(h.cri, h.podName("use-"+n), "", 60*time.Second); err != nil {
			t.Fatalf("pod use-%s: %v\n%s", n, err, h.log(40))
		}
	}
	time.Sleep(1500 * time.Millisecond) // a pass sees y in use
	if err := os.Remove(filepath.Join(h.manifests, "use-y.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod use-y is gone", func() bool { return len(h.sandboxes("use-y")) == 0 })
	yUnused := time.Now()

	waitFor(t, maxAge+30*time.Second, "y is removed", func() bool { return !present(refs["y"]) })
	gone := time.Since(start)
	t.Logf("y removed %v after the agent started, %v after its pod went (maximum age %v)", gone.Round(time.Second), time.Since(yUnused).Round(time.Second), maxAge)
	if gone < maxAge {
		t.Errorf("y removed %v after the agent started, before the maximum age of %v", gone, maxAge)
	}
	// Never used: the local busybox goes too, the same pass or the next.
	waitFor(t, 10*time.Second, "the unused busybox is removed", func() bool { return !present(env.BusyboxImage) })
	time.Sleep(2 * time.Second) // more passes
	if !present(refs["x"]) || !present(env.PauseImage) {
		t.Errorf("an image in use or the sandbox image was removed: x %v, pause %v", present(refs["x"]), present(env.PauseImage))
	}
	if got := h.metricWith(t, "nodeagent_image_gc_images_removed_total", `reason="age"`); got != 2 {
		t.Errorf("nodeagent_image_gc_images_removed_total{reason=\"age\"} = %v, want 2 (y and busybox)", got)
	}
	if got := h.metricWith(t, "nodeagent_image_gc_images_removed_total", `reason="space"`); got != 0 {
		t.Errorf("nodeagent_image_gc_images_removed_total{reason=\"space\"} = %v, want 0", got)
	}
	if _, _, err := pollRunning(h.cri, h.podName("use-x"), "", 10*time.Second); err != nil {
		t.Errorf("pod use-x: %v", err)
	}
}

// TestBinaryImageFSReclaimedBeforeEviction: with image garbage collection
// off, unused images take the image filesystem (a tmpfs of its own
// containerd) below the imagefs.available threshold while a pod from the
// apiserver runs. The eviction manager first removes the unused images,
// which is enough, and evicts no pod: the pod, which it could evict, runs
// on. (A node already under the threshold at start would refuse the pod:
// DiskPressure.)
func TestBinaryImageFSReclaimedBeforeEviction(t *testing.T) {
	p := env.StartPrivateContainerd(t, "fsr", "120m", "10.238.0.0/24")
	ctx := context.Background()
	var refs []string
	for _, n := range []string{"a", "b", "c", "d"} {
		repo := "fsr/img-" + n + ":1"
		if _, err := env.Registry.PushBusyboxWithLayer(repo, 8<<20); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, env.Registry.Image(repo))
	}
	pullAll := func() {
		t.Helper()
		for _, ref := range refs {
			if _, err := p.CRI.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err != nil {
				t.Fatalf("pulling %s: %v", ref, err)
			}
		}
	}
	present := func(image string) bool {
		resp, err := p.CRI.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", image, err)
		}
		return resp.GetImage().GetId() != ""
	}
	// What the four images take, to put the threshold between with and
	// without them.
	pullAll()
	with, _ := usagePercent(t, p.Root)
	for _, ref := range refs {
		if _, err := p.CRI.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err != nil {
			t.Fatalf("removing %s: %v", ref, err)
		}
	}
	without, _ := usagePercent(t, p.Root)
	if with-without < 10 {
		t.Fatalf("the images take %d%% of the tmpfs (%d%% with them, %d%% without): too little to place a threshold between", with-without, with, without)
	}
	threshold := 100 - (with+without)/2
	t.Logf("image filesystem %d%% used without the four images, %d%% with them; imagefs.available<%d%%", without, with, threshold)

	h := newConnectedAgentOnPrivate(t, p, "--image-gc-high-threshold=100", "--image-minimum-gc-age=0s",
		"--eviction-monitoring-interval=1s", fmt.Sprintf("--eviction-hard=imagefs.available<%d%%", threshold))
	keeper := h.createAPIPod(h.apiPodSpec("keeper", shContainer("main", sleepForever)))
	h.waitAPIPod(keeper.Name, "running", 60*time.Second, apiPodRunning(keeper.UID))

	// The reclaim removes the unused images the runtime lists when it
	// runs, which may be before the last pull has ended (as under the
	// kubelet): what must hold is that images went and the threshold is
	// met again.
	pullAll()
	waitFor(t, 60*time.Second, "unused images are removed until the image filesystem is over the threshold", func() bool {
		removed := 0
		for _, ref := range refs {
			if !present(ref) {
				removed++
			}
		}
		used, _ := usagePercent(t, p.Root)
		return removed > 0 && 100-used >= threshold
	})
	after, afterBytes := usagePercent(t, p.Root)
	t.Logf("image filesystem %d%% used (%d MiB) after the reclaim", after, afterBytes>>20)
	if 100-after < threshold {
		t.Errorf("%d%% available after the reclaim, still under the threshold of %d%%", 100-after, threshold)
	}
	if !present(env.BusyboxImage) || !present(env.PauseImage) {
		t.Errorf("an image in use or the sandbox image was removed: busybox %v, pause %v", present(env.BusyboxImage), present(env.PauseImage))
	}
	time.Sleep(3 * time.Second) // passes after the reclaim evict nothing either
	if pod := h.waitAPIPod(keeper.Name, "running", 10*time.Second, apiPodRunning(keeper.UID)); pod.Status.Reason != "" {
		t.Errorf("the pod: reason %q, want none", pod.Status.Reason)
	}
	if n := h.metricWith(t, "nodeagent_evictions_total"); n != 0 {
		t.Errorf("%v evictions, want none", n)
	}
}
