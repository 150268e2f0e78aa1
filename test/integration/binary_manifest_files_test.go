package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// waitManifestError polls the local API until file has a refusal that
// contains every one of want.
func (h *agentHarness) waitManifestError(file string, want ...string) localapi.ManifestError {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		errs, err := h.client.ManifestErrors(context.Background())
		if err == nil {
			for _, e := range errs.Files {
				if filepath.Base(e.Origin) != file {
					continue
				}
				ok := true
				for _, w := range want {
					ok = ok && strings.Contains(e.Message, w)
				}
				if ok {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no refusal of %s naming %q within 20s: %+v, %v", file, want, errs, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two files define one pod: the running one keeps running, also across a
// restart of the agent, though the newcomer's path sorts first; the
// newcomer is refused naming both files; once the holder goes, it runs.
func TestBinaryDuplicateNamesAcrossFiles(t *testing.T) {
	h := newAgent(t)
	holder := testPod("web", shContainer("main", sleepForever))
	h.writeRaw("b-web.yaml", mustYAML(t, holder))
	h.waitPod("web", "running", 60*time.Second, runningContainer("main"))
	id := h.runningIDs("web")["main"]

	newcomer := testPod("web", shContainer("main", sleepForever+" # the newcomer"))
	h.writeRaw("a-web.yaml", mustYAML(t, newcomer))
	h.waitManifestError("a-web.yaml", "b-web.yaml", "already defined")

	check := func(after string) {
		t.Helper()
		time.Sleep(2 * time.Second)
		if now := h.runningIDs("web")["main"]; now != id {
			t.Fatalf("after %s: running container %q, want %s unchanged", after, now, id)
		}
		if n := len(h.containers("web", false)); n != 1 {
			t.Fatalf("after %s: %d containers of the pod, want 1", after, n)
		}
		h.waitManifestError("a-web.yaml", "b-web.yaml", "already defined")
	}
	check("the newcomer arrived")
	h.stop()
	h.start()
	check("a SIGTERM and a restart")
	h.kill9()
	h.start()
	check("a SIGKILL and a restart")

	if err := os.Remove(filepath.Join(h.manifests, "b-web.yaml")); err != nil {
		t.Fatal(err)
	}
	h.waitPod("web", "the newcomer runs", 60*time.Second, func(p localapi.Pod) bool {
		return runningContainer("main")(p) && filepath.Base(p.Origin) == "a-web.yaml"
	})
}

// A manifest rewritten in place 100 times in 3 s with the same content (a
// config tool in a loop, truncating and writing) never restarts or removes
// its pod; one whose content alternates restarts it at most once per
// change interval (1 s).
func TestBinaryRewrittenManifestDoesNotFlap(t *testing.T) {
	h := newAgent(t)
	pod := testPod("flap", shContainer("main", sleepForever))
	content := mustYAML(t, pod)
	path := filepath.Join(h.manifests, "flap.yaml")
	h.writeRaw("flap.yaml", content)
	h.waitPod("flap", "running", 60*time.Second, runningContainer("main"))
	watch := watchContainers(t, h, "flap")
	id := h.runningIDs("flap")["main"]

	for range 100 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // a reader now sees an empty file
		if _, err := f.Write(content); err != nil {
			t.Fatal(err)
		}
		f.Close()
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if now := h.runningIDs("flap")["main"]; now != id {
		t.Errorf("same content rewritten: running container %q, want %s unchanged", now, id)
	}
	if ids := watch.ids("flap"); len(ids) != 1 {
		t.Errorf("same content rewritten: the runtime listed containers %v, want only the first", ids)
	}

	other := testPod("flap", shContainer("main", sleepForever+" # other"))
	alt := [][]byte{mustYAML(t, other), content}
	start := time.Now()
	for i := range 100 {
		h.writeRaw("flap.yaml", alt[i%2])
		time.Sleep(30 * time.Millisecond)
	}
	elapsed := time.Since(start)
	time.Sleep(2 * time.Second) // the newest content's turn comes within a change interval
	h.waitPod("flap", "running", 60*time.Second, runningContainer("main"))
	created := len(watch.ids("flap")) - 1
	limit := int(elapsed/time.Second) + 2
	t.Logf("alternating content, 100 rewrites in %v: %d pod restarts (limit %d)", elapsed.Round(time.Millisecond), created, limit)
	if created < 1 || created > limit {
		t.Errorf("alternating content: %d new containers, want 1 to %d (one per second)", created, limit)
	}
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
