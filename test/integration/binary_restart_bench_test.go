package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// BenchmarkBinaryRestartAdoption measures the nodeagent binary's restart
// with 50 static pods running (busybox idling; even pods on the host
// network, odd ones on the pod network): from the exec of the new process
// to the moment its local API reports all 50 pods Running, adopted, with
// the container IDs they had before. The socket appears only once the new
// agent listens; the time until then is counted in. The local API is
// polled every 5 ms from the exec on.
//
// Two rows of 20 restarts each: kill9 (SIGKILL, as a crash) and sigterm (a
// clean stop). Each reports p50, p99 and max, and api-up: when the local
// API first answered. A container replaced or restarted, a sandbox
// replaced, is a failure, not a number. Run it once:
//
//	go test -run '^$' -bench BenchmarkBinaryRestartAdoption -benchtime=1x -timeout 30m ./...
func BenchmarkBinaryRestartAdoption(b *testing.B) {
	const pods, restarts = 50, 20
	h := newAgent(b)
	for i := range pods {
		pod := testPod(fmt.Sprintf("adopt-%02d", i), shContainer("main", benchForever))
		pod.Spec.HostNetwork = i%2 == 0
		h.writeManifest(pod)
	}
	waitAllRunning(b, h, pods, 5*time.Minute, 100*time.Millisecond)
	want := h.runtimeState(b)
	if len(want.containers) != pods || len(want.sandboxes) != pods {
		b.Fatalf("%d containers and %d sandboxes in the runtime, want %d of each", len(want.containers), len(want.sandboxes), pods)
	}

	for _, row := range []struct {
		name string
		stop func()
	}{{"kill9", h.kill9}, {"sigterm", h.stop}} {
		var ready, apiUp []time.Duration
		for i := range restarts {
			row.stop()
			r := h.timedRestart(b, want.containers, time.Minute)
			ready, apiUp = append(ready, r.ready), append(apiUp, r.apiUp)
			if got := h.runtimeState(b); !got.equal(want) {
				b.Fatalf("%s restart %d: the runtime changed:\n%s", row.name, i+1, got.diff(want))
			}
		}
		reportNamed(b, row.name, ready)
		b.ReportMetric(float64(slices.Max(ready))/1e6, row.name+"-max-ms")
		reportNamed(b, row.name+"-api-up", apiUp)
	}

	// Relists, housekeeping and a resync later, still the same containers.
	time.Sleep(3 * time.Second)
	if got := h.runtimeState(b); !got.equal(want) {
		b.Fatalf("after the restarts settled, the runtime changed:\n%s", got.diff(want))
	}
}

type restartTiming struct {
	// apiUp: exec to the first answer of the local API; ready: exec to all
	// pods reported adopted.
	apiUp, ready time.Duration
}

// timedRestart starts the agent and times it from the exec until its local
// API reports every pod of want (pod full name -> container ID) Running,
// adopted, with that container running and never restarted. A container
// reported running under another ID fails at once.
func (h *agentHarness) timedRestart(b *testing.B, want map[string]string, timeout time.Duration) restartTiming {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type result struct {
		restartTiming
		err error
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		var r result
		r.apiUp, r.ready, r.err = pollAdopted(ctx, h.socket, h.node, want, t0)
		done <- r
	}()
	h.start() // exec, then waits for the local API's health, as ever
	r := <-done
	if r.err != nil {
		b.Fatalf("start %d of the agent: %v\n%s", h.starts, r.err, h.log(30))
	}
	return r.restartTiming
}

// pollAdopted polls the local API at socket every 5 ms until it reports
// the pods of want adopted, and returns, measured from t0, when it first
// answered and when the pods were all adopted.
func pollAdopted(ctx context.Context, socket, node string, want map[string]string, t0 time.Time) (apiUp, ready time.Duration, err error) {
	var client *localapi.Client
	var last []localapi.Pod
	for {
		if client == nil {
			client, _ = localapi.Dial(socket) // not there until the agent listens
		}
		if client != nil {
			pods, perr := client.Pods(ctx)
			if perr == nil {
				if apiUp == 0 {
					apiUp = time.Since(t0)
				}
				last = pods
				adopted, bad := allAdopted(pods, node, want)
				if bad != "" {
					return apiUp, 0, fmt.Errorf("%s\n%s", bad, describePods(pods, ""))
				}
				if adopted {
					return apiUp, time.Since(t0), nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return apiUp, 0, fmt.Errorf("the local API did not report all %d pods adopted in time; it last showed:\n%s", len(want), describePods(last, ""))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// allAdopted says whether pods hold exactly the pods of want, each Running,
// adopted and running its container of want, never restarted. bad is set
// when a pod runs another container or one was restarted: waiting longer
// cannot mend that.
func allAdopted(pods []localapi.Pod, node string, want map[string]string) (ok bool, bad string) {
	n := 0
	ok = true
	for _, p := range pods {
		if !strings.HasSuffix(p.Name, "-"+node) {
			continue
		}
		n++
		id, known := want[p.Name]
		if !known {
			return false, fmt.Sprintf("pod %s: the agent shows a pod that did not run before the restart", p.Name)
		}
		c := findContainer(p, "main")
		switch {
		case c == nil:
			ok = false
		case c.RestartCount != 0:
			return false, fmt.Sprintf("pod %s: container restarted %d time(s)", p.Name, c.RestartCount)
		case c.State == localapi.StateRunning && c.ContainerID != "containerd://"+id:
			return false, fmt.Sprintf("pod %s: runs container %s, want %s adopted", p.Name, c.ContainerID, id)
		case c.State != localapi.StateRunning || p.Phase != "Running" || !p.Adopted:
			ok = false
		}
	}
	return ok && n == len(want), ""
}

// runtimeState is what the runtime holds of a node: every container (any
// state) by pod full name, and every sandbox.
type runtimeState struct {
	containers map[string]string // pod full name -> container ID; "+" joins several
	running    map[string]bool   // container ID -> running
	sandboxes  map[string]bool   // sandbox ID -> ready
}

func (h *agentHarness) runtimeState(b *testing.B) runtimeState {
	b.Helper()
	ctx := context.Background()
	cs, err := h.cri.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		b.Fatalf("ListContainers: %v", err)
	}
	sbs, err := h.cri.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		b.Fatalf("ListPodSandbox: %v", err)
	}
	s := runtimeState{containers: map[string]string{}, running: map[string]bool{}, sandboxes: map[string]bool{}}
	for _, c := range cs.Containers {
		pod := c.Labels["io.kubernetes.pod.name"]
		if !strings.HasSuffix(pod, "-"+h.node) {
			continue
		}
		if prev := s.containers[pod]; prev != "" {
			s.containers[pod] = prev + "+" + c.Id
		} else {
			s.containers[pod] = c.Id
		}
		s.running[c.Id] = c.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	for _, sb := range sbs.Items {
		if strings.HasSuffix(sb.GetMetadata().GetName(), "-"+h.node) {
			s.sandboxes[sb.Id] = sb.State == runtimeapi.PodSandboxState_SANDBOX_READY
		}
	}
	return s
}

func (s runtimeState) equal(o runtimeState) bool {
	return maps.Equal(s.containers, o.containers) && maps.Equal(s.running, o.running) && maps.Equal(s.sandboxes, o.sandboxes)
}

// diff lists how s differs from want, one line each.
func (s runtimeState) diff(want runtimeState) string {
	var out []string
	for pod, id := range want.containers {
		if got := s.containers[pod]; got != id {
			out = append(out, fmt.Sprintf("  pod %s: containers %s, want %s", pod, got, id))
		}
	}
	for pod, id := range s.containers {
		if _, ok := want.containers[pod]; !ok {
			out = append(out, fmt.Sprintf("  pod %s: containers %s, a pod that was not there", pod, id))
		}
	}
	for id, run := range want.running {
		if got, ok := s.running[id]; ok && got != run {
			out = append(out, fmt.Sprintf("  container %s: running=%v, want %v", shortID(id), got, run))
		}
	}
	for id, ready := range want.sandboxes {
		if got, ok := s.sandboxes[id]; !ok {
			out = append(out, fmt.Sprintf("  sandbox %s: gone", shortID(id)))
		} else if got != ready {
			out = append(out, fmt.Sprintf("  sandbox %s: ready=%v, want %v", shortID(id), got, ready))
		}
	}
	for id := range s.sandboxes {
		if _, ok := want.sandboxes[id]; !ok {
			out = append(out, fmt.Sprintf("  sandbox %s: new", shortID(id)))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
