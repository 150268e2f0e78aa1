package integration

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestBinaryCrashDuringBurstLeavesNoDebris kills the agent with SIGKILL at
// a random moment while it replaces a burst of 20 pods (every manifest
// changed at once: 20 pods to stop, 20 to start), round after round. After
// each restart it must converge to exactly one sandbox and one running
// container per pod, of the manifests' UIDs, with nothing else of this
// node's pods left in the runtime (no container created but never
// started, no exited one, no sandbox of an old generation), and every
// container at restart count 0: a container interrupted while being
// created is not a restart. NODEAGENT_CRASH_SEED replays a run.
func TestBinaryCrashDuringBurstLeavesNoDebris(t *testing.T) {
	const pods, rounds = 20, 20
	seed := time.Now().UnixNano()
	if v, err := strconv.ParseInt(os.Getenv("NODEAGENT_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("%d rounds of %d pods, seed %d (NODEAGENT_CRASH_SEED=%d replays it)", rounds, pods, seed, seed)

	h := newAgent(t, "--housekeeping-interval", "1s", "--relist-interval", "200ms")
	burst := func(gen int) {
		for i := range pods {
			pod := testPod(fmt.Sprintf("burst-%02d", i), shContainer("main", sleepForever))
			pod.Spec.Containers[0].Env = []corev1.EnvVar{envVar("GEN", strconv.Itoa(gen))}
			h.writeManifest(pod)
		}
	}
	burst(0)
	if v, _ := h.convergeClean(120 * time.Second); len(v) > 0 {
		t.Fatalf("not converged before the first crash: %v", v)
	}

	// The floor: a burst that replaces every pod, with no crash, converges
	// in the time the runtime takes to stop and start 20 pods.
	began := time.Now()
	burst(rounds + 1)
	if v, _ := h.convergeClean(120 * time.Second); len(v) > 0 {
		t.Fatalf("the burst without a crash did not converge: %v", v)
	}
	floor := time.Since(began)

	// Per round: the convergence after the restart, and the crash's cost:
	// from the burst's start to convergence, less the floor.
	var worst, worstCost time.Duration
	for round := 1; round <= rounds; round++ {
		burstAt := time.Now()
		burst(round)
		nap := time.Duration(rng.Intn(1500)) * time.Millisecond
		time.Sleep(nap)
		h.kill9()
		h.start()
		began := time.Now()
		v, seen := h.convergeClean(60 * time.Second)
		took, cost := time.Since(began), time.Since(burstAt)-floor
		worst, worstCost = max(worst, took), max(worstCost, cost)
		if len(v) > 0 {
			t.Fatalf("round %d (killed %v into the burst): not converged within 60s:\n  %s\n%s", round, nap, strings.Join(v, "\n  "), h.logsAbout(v))
		}
		t.Logf("round %d: killed %v into the burst; converged %v after the restart, %v after the burst began (%+v against the burst without a crash; on the way: %d disagreements, e.g. %v)",
			round, nap, took.Round(10*time.Millisecond), time.Since(burstAt).Round(10*time.Millisecond), cost.Round(10*time.Millisecond), len(seen), first(seen))
	}
	// The floor again, after the rounds: the runtime's own time drifts.
	began = time.Now()
	burst(rounds + 2)
	if v, _ := h.convergeClean(120 * time.Second); len(v) > 0 {
		t.Fatalf("the last burst without a crash did not converge: %v", v)
	}
	t.Logf("crash during bursts: %d rounds of %d pods, worst convergence %v after the restart; the burst without a crash converges in %v (%v after the rounds), and a crash made it at worst %+v later than the first (housekeeping 1s); seed %d",
		rounds, pods, worst.Round(10*time.Millisecond), floor.Round(10*time.Millisecond), time.Since(began).Round(10*time.Millisecond), worstCost.Round(10*time.Millisecond), seed)
}

// convergeClean is converge with the debris check added.
func (h *agentHarness) convergeClean(timeout time.Duration) (left, seen []string) {
	h.t.Helper()
	return h.convergeBy(timeout, func() []string { return append(h.divergence(), h.debris()...) })
}

// debris lists what the runtime holds of this node's pods besides one
// running container and one ready sandbox per pod, and any container at a
// restart count other than 0.
func (h *agentHarness) debris() []string {
	ctx := context.Background()
	var out []string
	resp, err := h.cri.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return []string{fmt.Sprintf("ListContainers: %v", err)}
	}
	for _, c := range resp.Containers {
		pod := c.Labels["io.kubernetes.pod.name"]
		if !strings.HasSuffix(pod, "-"+h.node) {
			continue
		}
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, fmt.Sprintf("%s: container %s left in state %s", pod, shortID(c.Id), c.State))
		}
		if n := c.Annotations["io.kubernetes.container.restartCount"]; n != "0" {
			out = append(out, fmt.Sprintf("%s: container %s at restart count %s, want 0", pod, shortID(c.Id), n))
		}
	}
	for _, sb := range h.sandboxes("") {
		if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			out = append(out, fmt.Sprintf("%s: sandbox %s left in state %s", sb.GetMetadata().GetName(), shortID(sb.Id), sb.State))
		}
	}
	return out
}

// logsAbout returns the lines of every agent log so far that name a pod
// the disagreements name.
func (h *agentHarness) logsAbout(disagreements []string) string {
	names := map[string]bool{}
	for _, d := range disagreements {
		if name, _, ok := strings.Cut(d, ":"); ok {
			names[name] = true
		}
	}
	var b strings.Builder
	for i := 1; i <= h.starts; i++ {
		data, _ := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("agent-%d.log", i)))
		for _, l := range strings.Split(string(data), "\n") {
			for name := range names {
				if strings.Contains(l, name) {
					fmt.Fprintf(&b, "    agent-%d: %s\n", i, l)
					break
				}
			}
		}
	}
	return b.String()
}

func first(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}
