package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeagent/nodeagent/internal/eviction"
	"github.com/nodeagent/nodeagent/internal/host"
	"github.com/nodeagent/nodeagent/internal/localapi"
)

// The memory pressure set-up: the pods together may take the machine's
// memory less --kube-reserved, here podsMemory; the hard threshold
// memory.available<threshold then evicts once they use more than
// podsMemory-threshold. A hog writes hogBytes to a memory emptyDir, whose
// pages are charged to its cgroup until the volume goes.
const (
	podsMemory         = 800 << 20
	memoryThreshold    = "300Mi"
	memoryThresholdB   = 300 << 20
	hogMiB             = 600
	kubepodsMemoryPath = "/sys/fs/cgroup/memory/nodeagent/kubepods"
)

// newMemoryPressureAgent starts a connected agent whose pods may take
// podsMemory together.
func newMemoryPressureAgent(t testing.TB, extraArgs ...string) *agentHarness {
	t.Helper()
	mem, err := host.ReadMeminfo("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{fmt.Sprintf("--kube-reserved=memory=%d", mem["MemTotal"]-podsMemory),
		"--eviction-hard=memory.available<" + memoryThreshold}, extraArgs...)
	h := newConnectedAgent(t, args...)
	waitNode(t, "Ready", 30*time.Second, isReady)
	return h
}

// memoryHog is a Burstable pod (admitted under MemoryPressure too) that
// fills a memory emptyDir with hogMiB and sleeps.
func (h *agentHarness) memoryHog(name string) *corev1.Pod {
	c := shContainer("main", fmt.Sprintf("dd if=/dev/zero of=/fill/a bs=1M count=%d; %s", hogMiB, sleepForever))
	c.VolumeMounts = []corev1.VolumeMount{{Name: "fill", MountPath: "/fill"}}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	pod := h.apiPodSpec(name, c)
	limit := resource.MustParse("1Gi")
	pod.Spec.Volumes = []corev1.Volume{{Name: "fill", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}}
	return h.createAPIPod(pod)
}

// crossings watches the pods' cgroup every 5 ms and records when its
// working set first goes over what the threshold allows.
type crossings struct{ at atomic.Int64 }

func watchCrossing(ctx context.Context, t testing.TB) *crossings {
	c := &crossings{}
	if _, err := os.Stat(kubepodsMemoryPath); err != nil {
		t.Fatalf("the pods' memory cgroup: %v", err)
	}
	go func() {
		for ctx.Err() == nil {
			if ws, err := eviction.WorkingSet(kubepodsMemoryPath); err == nil && ws > podsMemory-memoryThresholdB {
				c.at.CompareAndSwap(0, time.Now().UnixNano())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return c
}

// evictedAt is when the agent's timeline says it evicted the pod.
func (h *agentHarness) evictedAt(t testing.TB, name string) time.Time {
	t.Helper()
	detail, err := h.client.Pod(context.Background(), "default", h.podName(name))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(detail.Timeline, func(e localapi.TimelineEntry) bool { return strings.HasPrefix(e.Message, "evicted") })
	if i < 0 {
		t.Fatalf("%s: no eviction in the timeline: %+v", name, detail.Timeline)
	}
	return detail.Timeline[i].Time
}

// TestBinaryMemoryPressureEviction: a pod that takes the pods' memory past
// the memory.available threshold is evicted as under the kubelet (Failed,
// Evicted, the kubelet's message naming the container, DisruptionTarget),
// right when the kernel says the threshold is crossed rather than at the
// next 10 s poll; a quiet pod runs on, and the node reports
// MemoryPressure.
func TestBinaryMemoryPressureEviction(t *testing.T) {
	h := newMemoryPressureAgent(t)
	quiet := h.createAPIPod(h.apiPodSpec("quiet", shContainer("main", sleepForever)))
	h.waitAPIPod(quiet.Name, "running", 60*time.Second, apiPodRunning(quiet.UID))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	crossed := watchCrossing(ctx, t)
	hog := h.memoryHog("hog")
	p := h.waitAPIPod(hog.Name, "evicted", 60*time.Second, func(p *corev1.Pod) bool {
		return p != nil && p.UID == hog.UID && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
	})
	const prefix = "The node was low on resource: memory. Threshold quantity: " + memoryThreshold + ", available: "
	if msg := p.Status.Message; !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "Container main was using") || !strings.HasSuffix(msg, "request is 0, has larger consumption of memory. ") {
		t.Errorf("message %q, want the kubelet's, naming container main", msg)
	}
	if c := podCondition(p, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue || c.Reason != corev1.PodReasonTerminationByKubelet {
		t.Errorf("DisruptionTarget condition %+v, want True, TerminationByKubelet", c)
	}
	waitEvent(t, hog.Namespace, "involvedObject.kind=Pod,involvedObject.name="+hog.Name+",reason=Evicted")
	if at := crossed.at.Load(); at == 0 {
		t.Error("the test never saw the pods' memory cross the threshold")
	} else {
		reaction := h.evictedAt(t, "hog").Sub(time.Unix(0, at))
		t.Logf("evicted %v after the pods' memory crossed the threshold (the poll is every 10s)", reaction.Round(time.Millisecond))
	}
	if n := h.metric(t, "nodeagent_eviction_memory_notifications_total"); n < 1 {
		t.Errorf("%v memory notifications: the eviction waited for a poll", n)
	}
	if n := h.metricWith(t, "nodeagent_evictions_total", `eviction_signal="`+eviction.SignalAllocatableMemoryAvailable+`"`); n != 1 {
		t.Errorf("%v evictions for %s, want 1", n, eviction.SignalAllocatableMemoryAvailable)
	}
	waitNode(t, "MemoryPressure", 30*time.Second, func(n *corev1.Node) bool {
		return nodeCondition(n, corev1.NodeMemoryPressure).Status == corev1.ConditionTrue
	})
	if p := h.waitAPIPod(quiet.Name, "running", 30*time.Second, apiPodRunning(quiet.UID)); p.Status.Reason != "" {
		t.Errorf("the quiet pod: reason %q, want none", p.Status.Reason)
	}
}

// BenchmarkBinaryMemoryEviction measures, over 20 hogs one after another,
// the time from the pods' memory crossing the memory.available threshold
// (seen by the benchmark's own 5 ms watch of the pods' cgroup) to the
// agent's eviction of the hog (its timeline), p50 and p99. The kubelet
// polls its signals every 10 s: half of that on average.
func BenchmarkBinaryMemoryEviction(b *testing.B) {
	const runs = 20
	for range b.N {
		h := newMemoryPressureAgent(b, "--eviction-pressure-transition-period=1s")
		var reactions []time.Duration
		for i := range runs {
			name := fmt.Sprintf("hog-%d", i)
			ctx, cancel := context.WithCancel(context.Background())
			crossed := watchCrossing(ctx, b)
			hog := h.memoryHog(name)
			h.waitAPIPod(hog.Name, "evicted", 60*time.Second, func(p *corev1.Pod) bool {
				return p != nil && p.UID == hog.UID && p.Status.Reason == "Evicted"
			})
			cancel()
			if at := crossed.at.Load(); at != 0 {
				reactions = append(reactions, h.evictedAt(b, name).Sub(time.Unix(0, at)))
			}
			// The next hog starts once this one's memory is back.
			deadline := time.Now().Add(60 * time.Second)
			for ws, _ := eviction.WorkingSet(kubepodsMemoryPath); ws > 100<<20; ws, _ = eviction.WorkingSet(kubepodsMemoryPath) {
				if time.Now().After(deadline) {
					b.Fatalf("the pods still use %d bytes a minute after the eviction", ws)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if len(reactions) < runs {
			b.Errorf("%d of %d crossings seen", len(reactions), runs)
		}
		b.Logf("crossing to eviction: %v", reactions)
		reportNamed(b, "reaction", reactions)
	}
}
