package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// BenchmarkBinaryImagePull50MB: a pod whose image (busybox and a 50 MB
// layer of random bytes, from the tests' registry) is not on the node,
// manifest written -> its container RUNNING, against the floor: the same
// image pulled with the CRI's PullImage (what crictl pull calls) and the
// pod started with the three CRI calls, made directly. The image is
// removed before each, and the two alternate; medians of 10.
//
//	go test -run '^$' -bench BenchmarkBinaryImagePull50MB -benchtime=1x ./...
func BenchmarkBinaryImagePull50MB(b *testing.B) {
	const repo = "public/fifty:1"
	if _, err := env.Registry.PushBusyboxWithLayer(repo, 50<<20); err != nil {
		b.Fatal(err)
	}
	image := env.Registry.Image(repo)
	ctx := context.Background()
	h := newAgent(b)
	cri, rt, node := env.CRI(b), newRuntime(b), floorNode()
	remove := func() {
		_, _ = cri.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	}
	b.Cleanup(remove)

	var agent, floor []time.Duration
	var split agentSplit
	for i := range 10 {
		// The agent: manifest -> RUNNING, pulling on the way.
		remove()
		name := fmt.Sprintf("fifty-%d", i)
		c := shContainer("main", benchForever)
		c.Image, c.ImagePullPolicy = image, corev1.PullIfNotPresent
		t0 := time.Now()
		h.writeManifest(testPod(name, c))
		if err := pollContainerRunning(h, h.podName(name), "main", 5*time.Minute); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, h.log(30))
		}
		agent = append(agent, time.Since(t0))
		split.add(b, h, name, t0)
		h.removeManifest(name)
		for len(h.containers(name, false)) > 0 || len(h.sandboxes(name)) > 0 {
			time.Sleep(20 * time.Millisecond)
		}

		// The floor: PullImage, then the three calls that start a pod,
		// replayed for a pod no agent knows (binary_podspec_floor_test.go).
		remove()
		sandbox, container := floorConfigs(b, rt, floorPod(fmt.Sprintf("fifty-%d", i), node, true))
		container.Image = &runtimeapi.ImageSpec{Image: image}
		t0 = time.Now()
		if _, err := cri.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}}); err != nil {
			b.Fatalf("PullImage: %v", err)
		}
		pulled := time.Since(t0)
		floor = append(floor, pulled+replayedCalls{sandbox: sandbox, container: container}.replay(b, h, fmt.Sprintf("fifty-%d", i)))
	}
	a, f := median(agent), median(floor)
	b.ReportMetric(float64(a.Microseconds())/1000, "agent-p50-ms")
	b.ReportMetric(float64(f.Microseconds())/1000, "floor-p50-ms")
	b.ReportMetric(float64(a)/float64(f), "agent/floor")
	split.report(b)
}

// agentSplit is where the agent's time went, by the pod's timeline and
// the runtime's own timestamps: manifest written -> the agent's loop takes
// the pod in (its timeline's first entry: inotify, the file source, the
// merge), -> its worker syncs it (the worker's "sync" entry) -> RunPodSandbox
// under way (the sandbox's CreatedAt: what the worker does before its
// first CRI call), -> the container created (the sandbox's set-up, the
// pull, CreateContainer), -> started, -> seen running by the benchmark's
// poll.
type agentSplit struct {
	toLoop, toWorker, toSandbox, toCreated, toStarted, toSeen []time.Duration
}

func (s *agentSplit) add(b *testing.B, h *agentHarness, name string, written time.Time) {
	seen := time.Now()
	ctx := context.Background()
	sbs := h.sandboxes(name)
	cs := h.containers(name, true)
	if len(sbs) != 1 || len(cs) != 1 {
		b.Fatalf("%s: %d sandboxes, %d running containers", name, len(sbs), len(cs))
	}
	st, err := h.cri.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cs[0].Id})
	if err != nil {
		b.Fatal(err)
	}
	detail, err := h.client.Pod(ctx, "default", h.podName(name))
	if err != nil || len(detail.Timeline) == 0 {
		b.Fatalf("%s: the timeline: %d entries, %v", name, len(detail.Timeline), err)
	}
	loop, worker := detail.Timeline[0].Time, time.Time{}
	for _, e := range detail.Timeline {
		if e.Kind == "worker" && e.Message == "sync" && worker.IsZero() {
			worker = e.Time
		}
	}
	sandbox, created, started := time.Unix(0, sbs[0].CreatedAt), time.Unix(0, st.Status.CreatedAt), time.Unix(0, st.Status.StartedAt)
	steps := []struct {
		into     *[]time.Duration
		from, to time.Time
	}{{&s.toLoop, written, loop}, {&s.toWorker, loop, worker}, {&s.toSandbox, worker, sandbox}, {&s.toCreated, sandbox, created}, {&s.toStarted, created, started}, {&s.toSeen, started, seen}}
	var line []string
	for _, st := range steps {
		*st.into = append(*st.into, st.to.Sub(st.from))
		line = append(line, st.to.Sub(st.from).Round(100*time.Microsecond).String())
	}
	b.Logf("%s: write->loop->worker->sandbox->created->started->seen: %s", name, strings.Join(line, " "))
}

func (s *agentSplit) report(b *testing.B) {
	for _, m := range []struct {
		d    []time.Duration
		unit string
	}{{s.toLoop, "write-to-loop-p50-ms"}, {s.toWorker, "loop-to-worker-p50-ms"}, {s.toSandbox, "worker-to-sandbox-p50-ms"}, {s.toCreated, "sandbox-to-created-p50-ms"}, {s.toStarted, "created-to-started-p50-ms"}, {s.toSeen, "started-to-seen-p50-ms"}} {
		b.ReportMetric(float64(median(m.d).Microseconds())/1000, m.unit)
	}
}
