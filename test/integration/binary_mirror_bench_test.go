package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
	"github.com/nodeagent/nodeagent/test/integration/framework"
)

// mirrorWatch records, from a watch on the apiserver (as the admin), when
// each mirror pod was first seen, and when its status first said Running
// with every container running and ready.
type mirrorWatch struct {
	mu      sync.Mutex
	created map[string]time.Time
	running map[string]time.Time
	ids     map[string]string // the container ID the Running status named
}

func watchMirrors(b *testing.B) *mirrorWatch {
	w := &mirrorWatch{created: map[string]time.Time{}, running: map[string]time.Time{}, ids: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	wi, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", env.NodeName).String()})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer wi.Stop()
		for ev := range wi.ResultChan() {
			now := time.Now()
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted || !podtypes.IsMirrorPod(p) {
				continue
			}
			w.mu.Lock()
			if _, seen := w.created[p.Name]; !seen {
				w.created[p.Name] = now
			}
			if _, seen := w.running[p.Name]; !seen && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 {
				cs := p.Status.ContainerStatuses[0]
				if cs.State.Running != nil && cs.Ready {
					w.running[p.Name], w.ids[p.Name] = now, strings.TrimPrefix(cs.ContainerID, "containerd://")
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *mirrorWatch) wait(b *testing.B, names []string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		missing := 0
		for _, n := range names {
			if _, ok := w.running[n]; !ok {
				missing++
			}
		}
		w.mu.Unlock()
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d mirror pods not Running within %v", missing, len(names), timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startedAt is when the runtime started the container, as the CRI says.
func startedAt(b *testing.B, cri *framework.CRI, id string) time.Time {
	resp, err := cri.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		b.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return time.Unix(0, resp.GetStatus().GetStartedAt())
}

// BenchmarkBinaryMirror measures mirror pods and their status, against the
// real apiserver and containerd, with a watcher on the apiserver:
//
//   - running-to-mirror: from the container's start (the CRI's startedAt)
//     to the mirror pod's status Running, seen through the watch, over 30
//     pods started one after another;
//
//   - manifest-to-mirror: from the manifest written to the mirror pod seen;
//
//   - burst50-running-to-mirror: the same for 50 pods written at once, the
//     worst of them and the median;
//
//   - the node's apiserver writes per started pod, from the audit log.
//
//     cd test/integration && go test -run '^$' -bench BenchmarkBinaryMirror -benchtime=1x -timeout 30m .
func BenchmarkBinaryMirror(b *testing.B) {
	for range b.N {
		h := newConnectedAgent(b)
		waitNode(b, "Ready", 30*time.Second, isReady)
		w := watchMirrors(b)
		user := "system:node:" + env.NodeName

		var toMirror, toCreated []time.Duration
		from := time.Now()
		var names []string
		for i := range 30 {
			name := fmt.Sprintf("seq%02d", i)
			written := time.Now()
			h.writeManifest(testPod(name, shContainer("main", benchForever)))
			names = append(names, h.podName(name))
			w.wait(b, names[len(names)-1:], 30*time.Second)
			w.mu.Lock()
			toCreated = append(toCreated, w.created[h.podName(name)].Sub(written))
			running, id := w.running[h.podName(name)], w.ids[h.podName(name)]
			w.mu.Unlock()
			toMirror = append(toMirror, running.Sub(startedAt(b, h.cri, id)))
		}
		to := time.Now()
		reportNamed(b, "running-to-mirror", toMirror)
		reportNamed(b, "manifest-to-mirror", toCreated)
		reportWritesPerPod(b, user, from, to, len(names))

		for i := range 30 {
			h.removeManifest(fmt.Sprintf("seq%02d", i))
		}
		for i := range 30 {
			h.waitMirror(fmt.Sprintf("seq%02d", i), "deleted", 30*time.Second, mirrorGone)
		}

		var burst []string
		for i := range 50 {
			burst = append(burst, fmt.Sprintf("burst%02d", i))
		}
		for _, name := range burst {
			h.writeManifest(testPod(name, shContainer("main", benchForever)))
		}
		full := make([]string, len(burst))
		for i, n := range burst {
			full[i] = h.podName(n)
		}
		w.wait(b, full, 3*time.Minute)
		var lags []time.Duration
		w.mu.Lock()
		for _, n := range full {
			lags = append(lags, w.running[n].Sub(startedAt(b, h.cri, w.ids[n])))
		}
		w.mu.Unlock()
		slices.Sort(lags)
		b.ReportMetric(float64(lags[len(lags)-1].Milliseconds()), "burst50-running-to-mirror-max-ms")
		b.ReportMetric(float64(median(lags).Milliseconds()), "burst50-running-to-mirror-p50-ms")
		for _, name := range burst {
			h.removeManifest(name)
		}
		for _, name := range burst {
			h.waitMirror(name, "deleted", time.Minute, mirrorGone)
		}
		h.stop()
	}
}

// reportWritesPerPod reports user's pod creates, status patches and pod
// reads per started pod in [from, to), from the audit log.
func reportWritesPerPod(b *testing.B, user string, from, to time.Time, pods int) {
	events, err := env.AuditEvents()
	if err != nil {
		b.Fatal(err)
	}
	var creates, patches, gets, eventWrites int
	for k, n := range framework.CountRequests(events, from, to) {
		if k.User != user {
			continue
		}
		switch {
		case k.Verb == "create" && k.Resource == "pods":
			creates += n
		case k.Verb == "patch" && k.Resource == "pods/status":
			patches += n
		case k.Verb == "get" && strings.HasPrefix(k.Resource, "pods"):
			gets += n
		case k.Resource == "events":
			eventWrites += n
		}
	}
	b.ReportMetric(float64(creates)/float64(pods), "pod-creates/pod")
	b.ReportMetric(float64(patches)/float64(pods), "status-patches/pod")
	b.ReportMetric(float64(gets)/float64(pods), "pod-gets/pod")
	b.ReportMetric(float64(eventWrites)/float64(pods), "event-writes/pod")
}
