package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/internal/localapi"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// BenchmarkBinaryAPIServerOutage stops the apiserver 5 times, each for
// NODEAGENT_BENCH_OUTAGE (default 60s), while static pods arrive, leave
// and change readiness and an API pod changes readiness, and measures,
// from the moment the apiserver answers /readyz again, how long until
// the Node's heartbeat is current, the Lease is renewed, every mirror pod
// is there (and no orphan) with its status current, and the API pod's
// pending status patch is written. It logs each outage (with how long the
// starting apiserver answered before /readyz was ok: on a loaded machine,
// long enough for every back-off to run out before it is ready) and
// reports the median and the maximum of each. Run it once:
//
//	NODEAGENT_BENCH_OUTAGE=60s go test -run '^$' -bench BenchmarkBinaryAPIServerOutage -benchtime=1x -timeout 30m .
func BenchmarkBinaryAPIServerOutage(b *testing.B) {
	outage := time.Minute
	if v := os.Getenv("NODEAGENT_BENCH_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			b.Fatalf("NODEAGENT_BENCH_OUTAGE=%q: want a duration of at least 5s (%v)", v, err)
		}
		outage = d
	}
	// No node API (--port 0): what it would serve plays no part here, and
	// its port may be another node's on a shared machine.
	h := newConnectedAgent(b, "--port", "0")
	marks := b.TempDir()
	// ready: a container whose readiness is the mark file name in marks.
	ready := func(pod *corev1.Pod, name string) *corev1.Pod {
		pod.Spec.Volumes = []corev1.Volume{{Name: "marks", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: marks}}}}
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = []corev1.VolumeMount{{Name: "marks", MountPath: "/marks"}}
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/marks/" + name}}},
			PeriodSeconds: 1, FailureThreshold: 1}
		return pod
	}
	loop := func(name string) *corev1.Pod { return testPod(name, shContainer("main", sleepForever)) }
	setMark := func(name string, on bool) {
		path := filepath.Join(marks, name)
		var err error
		if on {
			err = os.WriteFile(path, nil, 0o644)
		} else {
			err = os.Remove(path)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	setMark("flip", true)
	setMark("apiflip", true)
	h.writeManifest(loop("steady"))
	h.writeManifest(ready(loop("flip"), "flip"))
	api := h.createAPIPod(ready(h.apiPodSpec("apiflip", shContainer("main", sleepForever)), "apiflip"))
	for _, name := range []string{"steady", "flip"} {
		p := h.waitPod(name, "running", 30*time.Second, runningContainer("main"))
		h.waitMirror(name, "running", 10*time.Second, mirrorRunning(p.ConfigHash))
	}
	h.waitAPIPod(api.Name, "running", 30*time.Second, apiPodRunning(api.UID))
	waitNode(b, "Ready", 30*time.Second, isReady)

	var took outageTimes
	flipReady, arrived := true, ""
	for i := range 5 {
		// The heartbeat of record before the outage; one after the
		// return is newer.
		hb := nodeCondition(waitNodeTB(b), corev1.NodeReady).LastHeartbeatTime.Time
		env.StopAPIServer(b)
		down := time.Now()
		// What changes while the apiserver is away: a static pod
		// arrives, the one that arrived last time leaves, and the
		// readiness of a static pod and of an API pod turns over.
		arriving := fmt.Sprintf("arriving%d", i)
		h.writeManifest(loop(arriving))
		if arrived != "" {
			h.removeManifest(arrived)
		}
		gone := arrived
		arrived = arriving
		flipReady = !flipReady
		setMark("flip", flipReady)
		setMark("apiflip", flipReady)
		h.waitPod(arriving, "running", 30*time.Second, runningContainer("main"))
		for _, name := range []string{"flip", "apiflip"} {
			h.waitPod(name, fmt.Sprintf("Ready=%v", flipReady), 30*time.Second, podReadyIs(flipReady))
		}
		if gone != "" {
			h.waitPodGone(gone, 30*time.Second)
		}
		want := map[string]mirrorWant{}
		for _, name := range []string{"steady", "flip", arriving} {
			want[h.podName(name)] = mirrorWant{hash: h.localPod(name).ConfigHash, ready: name != "flip" || flipReady}
		}
		time.Sleep(outage - time.Since(down))
		back := make(chan outageTime, 1)
		go func() { back <- h.measureReturn(hb, down, want, api.UID, flipReady, 30*time.Second) }()
		env.StartAPIServer(b)
		t := <-back
		if t.err != "" {
			b.Fatalf("outage %d: %s\n%s", i+1, t.err, h.log(40))
		}
		b.Logf("outage %d (%v): from /readyz (%v after its first answer): Node heartbeat %v, Lease %v, mirrors %v, API pod status %v",
			i+1, outage, t.readyAfterAnswer.Round(time.Millisecond),
			t.node.Round(time.Millisecond), t.lease.Round(time.Millisecond), t.mirrors.Round(time.Millisecond), t.status.Round(time.Millisecond))
		took = append(took, t)
	}
	took.report(b)
	// The harness stops the agent after the API pod is deleted (a
	// cleanup), so that the agent unmounts its volumes.
}

// mirrorWant is what a mirror pod must show: the static pod's hash, and
// whether it is Ready.
type mirrorWant struct {
	hash  string
	ready bool
}

// outageTime is how long after /readyz each part was current again;
// readyAfterAnswer how long the apiserver answered requests (/readyz not
// ok) before it was ready.
type outageTime struct {
	node, lease, mirrors, status time.Duration
	readyAfterAnswer             time.Duration
	err                          string
}

type outageTimes []outageTime

func (ts outageTimes) report(b *testing.B) {
	for _, part := range []struct {
		name string
		of   func(outageTime) time.Duration
	}{
		{"node", func(t outageTime) time.Duration { return t.node }},
		{"lease", func(t outageTime) time.Duration { return t.lease }},
		{"mirrors", func(t outageTime) time.Duration { return t.mirrors }},
		{"status", func(t outageTime) time.Duration { return t.status }},
	} {
		var d []time.Duration
		for _, t := range ts {
			d = append(d, part.of(t))
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Milliseconds()), "ms-"+part.name+"-median")
		b.ReportMetric(float64(d[len(d)-1].Milliseconds()), "ms-"+part.name+"-max")
	}
}

// measureReturn polls /readyz until the apiserver (being started) is
// ready, then polls the Node, the Lease and the node's pods every 25 ms
// until each is current: the Node Ready with a heartbeat newer than hb,
// the Lease renewed since down (at or after /readyz), the mirror pods exactly want, and the
// API pod uid's Ready condition apiReady.
func (h *agentHarness) measureReturn(hb, down time.Time, want map[string]mirrorWant, uid types.UID, apiReady bool, timeout time.Duration) outageTime {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Minute)
	defer cancel()
	var readyz, answered time.Time
	for readyz.IsZero() {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		body, err := env.AdminClient.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		rcancel()
		var status apierrors.APIStatus
		if answered.IsZero() && (err == nil || errors.As(err, &status)) {
			answered = time.Now()
		}
		switch {
		case err == nil && string(body) == "ok":
			readyz = time.Now()
		case ctx.Err() != nil:
			return outageTime{err: "the apiserver was not ready in time"}
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	t := outageTime{readyAfterAnswer: readyz.Sub(answered)}
	var node, lease, mirrors, status bool
	var why string
	onNode := fields.OneTermEqualSelector("spec.nodeName", h.node).String()
	for !node || !lease || !mirrors || !status {
		since := time.Since(readyz)
		if since > timeout {
			t.err = fmt.Sprintf("not all current %v after /readyz: node %v, lease %v, mirrors %v (%s), API pod status %v", timeout, node, lease, mirrors, why, status)
			return t
		}
		if !node {
			if n, err := env.AdminClient.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{}); err == nil {
				c := nodeCondition(n, corev1.NodeReady)
				if node = c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(hb); node {
					t.node = since
				}
			}
		}
		if !lease {
			l, err := env.AdminClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, h.node, metav1.GetOptions{})
			if lease = err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(down); lease {
				t.lease = since
			}
		}
		if pods, err := env.AdminClient.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: onNode}); err == nil {
			if !mirrors {
				if mirrors, why = mirrorsAre(pods.Items, want); mirrors {
					t.mirrors = since
				}
			}
			for i := range pods.Items {
				if p := &pods.Items[i]; !status && p.UID == uid {
					c := podCondition(p, corev1.PodReady)
					if status = c != nil && (c.Status == corev1.ConditionTrue) == apiReady; status {
						t.status = since
					}
				}
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return t
}

// mirrorsAre says whether pods hold exactly the mirror pods of want,
// each of its hash, running, and Ready as wanted; and if not, why.
func mirrorsAre(pods []corev1.Pod, want map[string]mirrorWant) (bool, string) {
	seen := 0
	for i := range pods {
		p := &pods[i]
		if !podtypes.IsMirrorPod(p) {
			continue
		}
		w, ok := want[p.Name]
		if !ok {
			return false, "orphan mirror " + p.Name
		}
		seen++
		if p.DeletionTimestamp != nil || p.Annotations[podtypes.ConfigMirrorAnnotationKey] != w.hash || p.Status.Phase != corev1.PodRunning {
			return false, "mirror not current: " + describeAPIPod(p)
		}
		c := podCondition(p, corev1.PodReady)
		if c == nil || (c.Status == corev1.ConditionTrue) != w.ready {
			return false, fmt.Sprintf("mirror %s not Ready=%v yet", p.Name, w.ready)
		}
	}
	if seen != len(want) {
		return false, fmt.Sprintf("%d of %d mirrors", seen, len(want))
	}
	return true, ""
}

// podReadyIs: the local API shows the pod's Ready condition as ready.
func podReadyIs(ready bool) func(localapi.Pod) bool {
	return func(p localapi.Pod) bool {
		for _, c := range p.Conditions {
			if c.Type == string(corev1.PodReady) {
				return (c.Status == string(corev1.ConditionTrue)) == ready
			}
		}
		return false
	}
}

// waitPodGone polls the local API until it no longer lists the pod.
func (h *agentHarness) waitPodGone(name string, timeout time.Duration) {
	h.t.Helper()
	full := h.podName(name)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods, err := h.client.Pods(context.Background())
		if err == nil && !slices.ContainsFunc(pods, func(p localapi.Pod) bool { return p.Name == full }) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("pod %s still listed %v after its manifest was removed\n%s", full, timeout, strings.TrimSpace(h.log(20)))
}
