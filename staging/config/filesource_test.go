package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// runFileSource runs a file source feeding an incremental merger until the
// test ends, and checks that Run returns when its context does.
func runFileSource(t *testing.T, opts FileOptions) (*FileSource, *Merger) {
	t.Helper()
	m := NewMerger(MergerOptions{Buffer: 100})
	opts.Sink = m
	if opts.NodeName == "" {
		opts.NodeName = testNode
	}
	fs, err := NewFileSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not end with its context")
		}
	})
	return fs, m
}

// eventually polls cond until it holds, failing the test after a while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// expect reads the next update and compares its summary.
func expect(t *testing.T, m *Merger, want string) {
	t.Helper()
	if got := summarize(next(t, m.Updates())); got != want {
		t.Fatalf("update = %q, want %q", got, want)
	}
}

func mergedNames(m *Merger) []string { return podNames(m.Pods()) }

func TestFileSourceFollowsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", podManifest("a", "img:1"))
	_, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file [file:a-node1]")

	b := writeFile(t, dir, "b.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"img:1"}]}}`)
	expect(t, m, "ADD file [file:b-node1]")

	writeFile(t, dir, "a.yaml", podManifest("a", "img:2"))
	// An edit changes the static pod's UID: the old pod goes, the new comes.
	expect(t, m, "REMOVE file [file:a-node1]")
	u := next(t, m.Updates())
	if summarize(u) != "ADD file [file:a-node1]" || u.Pods[0].Spec.Containers[0].Image != "img:2" {
		t.Fatalf("after the edit: %s with image %s", summarize(u), u.Pods[0].Spec.Containers[0].Image)
	}

	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	expect(t, m, "REMOVE file [file:b-node1]")

	// Touching a file without changing it changes nothing.
	now := time.Now()
	if err := os.Chtimes(a, now, now); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "c.yml", podManifest("c", "img:1"))
	expect(t, m, "ADD file [file:c-node1]")
}

func TestFileSourceKeepsTheLastAcceptedPodOfABrokenFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "web.yaml", podManifest("web", "img:1"))
	writeFile(t, dir, "other.yaml", podManifest("other", "img:1"))
	fs, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file [file:other-node1 file:web-node1]")

	writeFile(t, dir, "web.yaml", strings.Replace(podManifest("web", "img:2"), "image:", "imagee:", 1))
	eventually(t, "the refusal of web.yaml", func() bool { return fs.Err(path) != nil })
	if err := fs.Err(path); !errors.Is(err, manifest.ErrStrict) || !strings.Contains(err.Error(), path+": ") ||
		!strings.Contains(err.Error(), "spec.containers[0].imagee") {
		t.Errorf("Err(web.yaml) = %v", err)
	}
	if diff := cmp.Diff([]string{"other-node1", "web-node1"}, mergedNames(m)); diff != "" {
		t.Errorf("pods while web.yaml is broken (-want +got):\n%s", diff)
	}
	if img := m.Pods()[1].Spec.Containers[0].Image; img != "img:1" {
		t.Errorf("web runs %s, want the last accepted img:1", img)
	}

	writeFile(t, dir, "web.yaml", podManifest("web", "img:2"))
	expect(t, m, "REMOVE file [file:web-node1]")
	expect(t, m, "ADD file [file:web-node1]")
	if err := fs.Err(path); err != nil {
		t.Errorf("Err(web.yaml) after the fix = %v", err)
	}
	if len(drain(m.Updates())) != 0 {
		t.Error("the refusal changed other pods")
	}
}

func TestFileSourceWaitsForAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	fs, m := runFileSource(t, FileOptions{Path: dir, RetryMax: 20 * time.Millisecond})
	// No directory is no pods, and the source is ready.
	expect(t, m, "ADD file []")
	if err := fs.Errors()[dir]; !errors.Is(err, ErrPathMissing) {
		t.Errorf("Errors()[dir] = %v, want ErrPathMissing", err)
	}
	must(t, os.Mkdir(dir+".tmp", 0o755))
	writeFile(t, dir+".tmp", "web.yaml", podManifest("web", "img:1"))
	must(t, os.Rename(dir+".tmp", dir))
	expect(t, m, "ADD file [file:web-node1]")
	if errs := fs.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v once the directory exists", errs)
	}

	// The directory goes: its pods go; it comes back: they come back.
	must(t, os.RemoveAll(dir))
	expect(t, m, "REMOVE file [file:web-node1]")
	must(t, os.Mkdir(dir, 0o755))
	writeFile(t, dir, "web.yaml", podManifest("web", "img:1"))
	expect(t, m, "ADD file [file:web-node1]")
}

func TestFileSourceDuplicateNamesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", podManifest("web", "img:1"))
	b := writeFile(t, dir, "b.yaml", podManifest("web", "img:2"))
	fs, m := runFileSource(t, FileOptions{Path: dir})
	u := next(t, m.Updates())
	if summarize(u) != "ADD file [file:web-node1]" || u.Pods[0].Spec.Containers[0].Image != "img:1" {
		t.Fatalf("first: %s with %s; want a.yaml's pod", summarize(u), u.Pods[0].Spec.Containers[0].Image)
	}
	want := b + ": pod full name is already in use: pod full name web-node1_default is already defined by " + a
	if err := fs.Err(b); err == nil || err.Error() != want || !errors.Is(err, manifest.ErrDuplicate) {
		t.Errorf("Err(b.yaml) = %v\nwant %s", err, want)
	}
	// The holder goes: the other file's pod takes the name.
	must(t, os.Remove(a))
	expect(t, m, "REMOVE file [file:web-node1]")
	u = next(t, m.Updates())
	if summarize(u) != "ADD file [file:web-node1]" || u.Pods[0].Spec.Containers[0].Image != "img:2" {
		t.Fatalf("after removing a.yaml: %s with %s; want b.yaml's pod", summarize(u), u.Pods[0].Spec.Containers[0].Image)
	}
	if errs := fs.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v", errs)
	}
}

func TestFileSourceResyncReadsWhatInotifyMisses(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := writeFile(t, elsewhere, "web.yaml", podManifest("web", "img:1"))
	must(t, os.Symlink(target, filepath.Join(dir, "web.yaml")))
	clk := clocktesting.NewFakeClock(time.Now())
	_, m := runFileSource(t, FileOptions{Path: dir, Clock: clk})
	expect(t, m, "ADD file [file:web-node1]")

	writeFile(t, elsewhere, "web.yaml", podManifest("web", "img:2")) // no event in dir
	eventually(t, "the resync timer", clk.HasWaiters)
	clk.Step(20 * time.Second)
	expect(t, m, "REMOVE file [file:web-node1]")
	expect(t, m, "ADD file [file:web-node1]")
}

func TestFileSourceRecordsPickupLatency(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, m := runFileSource(t, FileOptions{Path: dir, Metrics: met})
	expect(t, m, "ADD file []")
	writeFile(t, dir, "web.yaml", podManifest("web", "img:1"))
	expect(t, m, "ADD file [file:web-node1]")
	writeFile(t, dir, "bad.yaml", "kind: Nope\n")
	eventually(t, "a refusal counted", func() bool {
		v, _ := testutil.GetCounterValuesFromGatherer(reg, "nodeagent_config_manifests_refused_total", map[string]string{"source": "file"}, "reason")
		return v["WrongKind"] == 1
	})
	h, err := testutil.GetHistogramVecFromGatherer(reg, "nodeagent_config_pickup_latency_seconds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.GetAggregatedSampleCount(); n != 1 {
		t.Errorf("pickup latency samples = %d, want 1", n)
	}
}

func TestNewFileSourceNeedsItsOptions(t *testing.T) {
	sink := chanSink(make(chan podtypes.PodUpdate))
	for _, opts := range []FileOptions{{NodeName: "n", Sink: sink}, {Path: "/x", Sink: sink}, {Path: "/x", NodeName: "n"}} {
		if _, err := NewFileSource(opts); err == nil {
			t.Errorf("NewFileSource(%+v) succeeded", opts)
		}
	}
}
