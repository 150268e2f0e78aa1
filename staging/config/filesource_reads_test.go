package config

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// TestFileSourcePicksUpAManifestWhileAnotherIsParsed holds the parse of a
// large manifest until a small one written after it has been picked up:
// the file source must not wait for one file to read another.
func TestFileSourcePicksUpAManifestWhileAnotherIsParsed(t *testing.T) {
	dir := t.TempDir()
	m := NewMerger(MergerOptions{Buffer: 100})
	fs, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: m})
	if err != nil {
		t.Fatal(err)
	}
	parsing := make(chan struct{}, 1)
	release := make(chan struct{})
	fs.parse = func(data []byte, opts manifest.ParseOptions) ([]*corev1.Pod, error) {
		if filepath.Base(opts.Origin) == "big.yaml" {
			select {
			case parsing <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-time.After(20 * time.Second): // the test has failed; let Run end
			}
		}
		return manifest.ParseManifest(data, opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.Run(ctx) }()
	defer func() { cancel(); <-done }()
	expect(t, m, "ADD file []")

	writeFile(t, dir, "big.yaml", string(largePodList(manifest.MaxManifestBytes)))
	select {
	case <-parsing:
	case <-time.After(10 * time.Second):
		t.Fatal("big.yaml was not parsed")
	}
	writeFile(t, dir, "small.yaml", podManifest("small", "i:1"))
	expect(t, m, "ADD file [file:small-node1]")
	close(release)
	u := next(t, m.Updates())
	if u.Op != podtypes.ADD || len(u.Pods) < 10 {
		t.Errorf("after the release: %s, want the ADD of big.yaml's pods", summarize(u))
	}
}

// TestFileSourceRereadsAFileChangedWhileItIsRead changes a manifest while
// its first version is being parsed: the pods end as the second version
// says.
func TestFileSourceRereadsAFileChangedWhileItIsRead(t *testing.T) {
	dir := t.TempDir()
	m := NewMerger(MergerOptions{Buffer: 100})
	fs, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: m})
	if err != nil {
		t.Fatal(err)
	}
	parsing := make(chan struct{})
	release := make(chan struct{})
	first := true
	fs.parse = func(data []byte, opts manifest.ParseOptions) ([]*corev1.Pod, error) {
		if first { // only one read of a file runs at a time
			first = false
			close(parsing)
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
		return manifest.ParseManifest(data, opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.Run(ctx) }()
	defer func() { cancel(); <-done }()
	expect(t, m, "ADD file []")

	writeFile(t, dir, "web.yaml", podManifest("web", "img:1"))
	<-parsing
	writeFile(t, dir, "web.yaml", podManifest("web", "img:2"))
	time.Sleep(50 * time.Millisecond) // let the second write's events in, most of the time
	close(release)
	eventually(t, "the pod of the second version", func() bool {
		pods := m.Pods()
		return len(pods) == 1 && pods[0].Spec.Containers[0].Image == "img:2"
	})
}

// BenchmarkFilePickupBesideALargeManifest measures, like
// BenchmarkFilePickup, the time from writing a small manifest to its ADD,
// while a manifest at the size limit written just before it is being read
// and parsed.
func BenchmarkFilePickupBesideALargeManifest(b *testing.B) {
	dir := b.TempDir()
	for i := range 10 {
		writeFile(b, dir, fmt.Sprintf("static-%d.yaml", i), podManifest(fmt.Sprintf("static-%d", i), "registry.local/app:1.0"))
	}
	large := largePodList(manifest.MaxManifestBytes)
	writeFile(b, dir, "large.yaml", string(large))
	m := NewMerger(MergerOptions{Mode: Incremental})
	fs, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: m})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.Run(ctx) }()
	defer func() { cancel(); <-done }()
	next(b, m.Updates()) // the initial ADD

	var lat []time.Duration
	i := 0
	for b.Loop() {
		// The large manifest changes (its first pod is renamed) each time,
		// so it is parsed again.
		renamed := fmt.Sprintf("a%04d", i%10000)
		if err := os.WriteFile(filepath.Join(dir, "large.yaml"), bytes.Replace(large, []byte("name: app-0\n"), []byte("name: "+renamed+"\n"), 1), 0o644); err != nil {
			b.Fatal(err)
		}
		isLarge := func(u podtypes.PodUpdate) bool { return u.Op == podtypes.ADD && hasPod(u, renamed+"-"+testNode) }
		name := fmt.Sprintf("bench-%d", i)
		path := filepath.Join(dir, name+".yaml")
		start := time.Now()
		if err := os.WriteFile(path, []byte(podManifest(name, "registry.local/app:1.0")), 0o644); err != nil {
			b.Fatal(err)
		}
		sawLarge := false
		waitFor(b, m.Updates(), "the ADD of "+name, func(u podtypes.PodUpdate) bool {
			sawLarge = sawLarge || isLarge(u)
			return u.Op == podtypes.ADD && hasPod(u, name+"-"+testNode)
		})
		lat = append(lat, time.Since(start))
		b.StopTimer()
		if !sawLarge {
			waitFor(b, m.Updates(), "the large manifest's pods", isLarge)
		}
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
		waitFor(b, m.Updates(), "the REMOVE of "+name, func(u podtypes.PodUpdate) bool {
			return u.Op == podtypes.REMOVE && len(u.Pods) == 1
		})
		b.StartTimer()
		i++
	}
	reportPercentiles(b, lat)
}

func hasPod(u podtypes.PodUpdate, name string) bool {
	for _, p := range u.Pods {
		if p.Name == name {
			return true
		}
	}
	return false
}
