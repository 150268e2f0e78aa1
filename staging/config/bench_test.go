package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// BenchmarkFilePickup measures, with the default settings, the time from
// writing a new manifest to receiving its ADD from the merger, and reports
// the 50th and 99th percentiles. Ten other manifests sit in the directory.
func BenchmarkFilePickup(b *testing.B) {
	dir := b.TempDir()
	for i := range 10 {
		writeFile(b, dir, fmt.Sprintf("static-%d.yaml", i), podManifest(fmt.Sprintf("static-%d", i), "registry.local/app:1.0"))
	}
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
		name := fmt.Sprintf("bench-%d", i)
		content := []byte(podManifest(name, "registry.local/app:1.0"))
		path := filepath.Join(dir, name+".yaml")
		start := time.Now()
		if err := os.WriteFile(path, content, 0o644); err != nil {
			b.Fatal(err)
		}
		u := waitFor(b, m.Updates(), "the ADD of "+name, func(u podtypes.PodUpdate) bool { return u.Op == podtypes.ADD })
		lat = append(lat, time.Since(start))
		if len(u.Pods) != 1 || u.Pods[0].Name != name+"-"+testNode {
			b.Fatalf("got %s, want the ADD of %s", summarize(u), name)
		}
		b.StopTimer()
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
		waitFor(b, m.Updates(), "the REMOVE of "+name, func(u podtypes.PodUpdate) bool { return u.Op == podtypes.REMOVE })
		b.StartTimer()
		i++
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// benchPods are 1,000 static pods as the file source makes them.
func benchPods(b *testing.B, image string) []*corev1.Pod {
	b.Helper()
	pods := make([]*corev1.Pod, 0, 1000)
	for i := range 1000 {
		data := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: app-%d
  namespace: kube-system
  labels: {app: app-%d, tier: control-plane}
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  containers:
  - name: main
    image: %s
    command: [/app, --port=%d]
    ports: [{containerPort: %d, name: http}]
    resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
    livenessProbe: {httpGet: {port: %d, path: /healthz}}
    volumeMounts: [{name: data, mountPath: /var/lib/app}]
  volumes:
  - {name: data, hostPath: {path: /var/lib/app-%d, type: DirectoryOrCreate}}
`, i, i, image, 10000+i, 10000+i, 10000+i, i)
		p, err := manifest.ParseManifest([]byte(data), manifest.ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: fmt.Sprintf("/m/app-%d.yaml", i)})
		if err != nil {
			b.Fatal(err)
		}
		pods = append(pods, p...)
	}
	return pods
}

// BenchmarkMergeSet1000 merges a SET of 1,000 pods (incremental mode, the
// updates drained by the receiver): into an empty merger (1,000 ADDs),
// unchanged (nothing to send), and with one manifest edited (a REMOVE and
// an ADD). The
// time includes copying the pods handed to the merger.
func BenchmarkMergeSet1000(b *testing.B) {
	pods := benchPods(b, "registry.local/app:1.0")
	drainAll := func(m *Merger) func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-m.Updates():
				case <-ctx.Done():
					return
				}
			}
		}()
		return func() { cancel(); <-done }
	}
	merge := func(b *testing.B, m *Merger, pods []*corev1.Pod) {
		if err := m.Merge(context.Background(), podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.FileSource, Pods: copyPods(pods)}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("initial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := NewMerger(MergerOptions{})
			stop := drainAll(m)
			merge(b, m, pods)
			stop()
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		m := NewMerger(MergerOptions{})
		defer drainAll(m)()
		merge(b, m, pods)
		b.ReportAllocs()
		for b.Loop() {
			merge(b, m, pods)
		}
	})
	b.Run("one-changed", func(b *testing.B) {
		m := NewMerger(MergerOptions{})
		defer drainAll(m)()
		merge(b, m, pods)
		// An edited manifest: a new UID, so a REMOVE and an ADD.
		changed := slices.Clone(pods)
		alt := benchPods(b, "registry.local/app:1.1")[500]
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				changed[500] = alt
			} else {
				changed[500] = pods[500]
			}
			merge(b, m, changed)
			i++
		}
	})
}
