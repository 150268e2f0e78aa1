package integration

import (
	"context"
	"fmt"
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
}
